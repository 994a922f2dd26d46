#!/usr/bin/env bash
# Where a frame's time goes (ARCHITECTURE.md): CPU by thread of `BINARY demo` under Xvfb with
# Mesa's software renderer, and the frames/s the app logs, for each 3D paint mode
# (JAUS_OCU_3D: cached = the picture, off = not painted, direct = rendered every frame).
# Usage: [MODES="cached off direct"] [JAUS_OCU_PLOT_LINES=off] .ci/frame-breakdown.sh BINARY [SECONDS] [WxH]
# Divide a thread's share by the frames/s for its milliseconds per frame. The window paces its
# frames to a CPU budget (ui/pace.rs): prefix JAUS_OCU_CPU_BUDGET=off to measure what frames
# cost at the content rates (about 10 frames/s), as ARCHITECTURE.md's table does.
set -euo pipefail
BIN=$1; SECS=${2:-20}; SIZE=${3:-1280x800}; W=${SIZE%x*}; H=${SIZE#*x}
Xvfb ${CPU_DISPLAY:-:95} -screen 0 ${W}x${H}x24 -nolisten tcp >/dev/null 2>&1 & XPID=$!
trap 'kill $XPID 2>/dev/null || true' EXIT
sleep 1
TICKS=$(getconf CLK_TCK)
snap() { for t in /proc/$1/task/*; do echo "$(cat $t/comm | tr ' ' _) $(awk '{print $14+$15}' $t/stat)"; done | awk '{a[$1]+=$2} END {for (k in a) print k, a[k]}' | sort; }
for mode in ${MODES:-direct off cached}; do
  S=$(mktemp -d)
  env -u WAYLAND_DISPLAY DISPLAY=${CPU_DISPLAY:-:95} XDG_DATA_HOME=$S JAUS_OCU_3D=$mode RUST_LOG=jaus_ocu::ui::app=debug "$BIN" demo > /tmp/bd-$mode.log 2>&1 & P=$!
  sleep 3; WID=$(DISPLAY=${CPU_DISPLAY:-:95} xdotool search --pid $P | tail -1); DISPLAY=${CPU_DISPLAY:-:95} xdotool windowsize $WID $W $H windowmove $WID 0 0; sleep 5
  snap $P > /tmp/bd-a; sleep $SECS; snap $P > /tmp/bd-b
  fps=$(grep -o "[0-9.]* frames/s, [0-9.]* 3D pictures/s" /tmp/bd-$mode.log | tail -1)
  echo "== $mode ($SIZE): $fps"
  join /tmp/bd-a /tmp/bd-b | awk -v t=$TICKS -v s=$SECS '{d=($3-$2)*100/t/s; if (d>0.05) printf "   %-16s %5.1f %%\n", $1, d; tot+=d} END {printf "   %-16s %5.1f %%\n", "total", tot}'
  kill $P; wait $P 2>/dev/null || true; rm -rf $S
done
