#!/usr/bin/env bash
# The window's CPU use in three states, under Xvfb with Mesa's software renderer: the live
# demo, a replay playing, a replay paused. CPU = (utime + stime) from /proc/PID/stat over
# SECONDS of wall time after a warm-up, as a percentage of one core.
# Usage: .ci/cpu.sh BINARY RECORDING.mcap [SECONDS]
# Make a recording first (it must play for longer than SECONDS + 10 s):
#   BINARY sim --tour & BINARY record --out rec.mcap --duration 70 --quiet; kill %1
set -euo pipefail
BIN=$1
REC=$2
SECONDS_=${3:-30}
DISPLAY_NUM=${CPU_DISPLAY:-:96}
Xvfb "$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
XPID=$!
APID=
SETTINGS=$(mktemp -d)
trap 'kill $XPID ${APID:-} 2>/dev/null || true; rm -rf "$SETTINGS"' EXIT
sleep 1
TICKS=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# Percent of one core used by $1 over SECONDS_.
measure() {
    local a b
    a=$(cpu_ticks "$1")
    sleep "$SECONDS_"
    b=$(cpu_ticks "$1")
    awk -v d=$((b - a)) -v t="$TICKS" -v s="$SECONDS_" 'BEGIN { printf "%.1f", 100 * d / t / s }'
}

run() {
    env -u WAYLAND_DISPLAY -u WAYLAND_SOCKET DISPLAY="$DISPLAY_NUM" XDG_DATA_HOME="$SETTINGS" \
        "$BIN" "$@" >/dev/null 2>&1 &
    APID=$!
    sleep 8
}

run demo
echo "live demo:       $(measure $APID) % of one core"
kill $APID; wait $APID 2>/dev/null || true

run replay "$REC"
echo "replay paused:   $(measure $APID) % of one core"
# Focus the window (no window manager: windowfocus, then a click into the 3D view) and press
# Space (play).
WID=$(DISPLAY="$DISPLAY_NUM" xdotool search --pid $APID | tail -1)
DISPLAY="$DISPLAY_NUM" xdotool windowfocus "$WID"
DISPLAY="$DISPLAY_NUM" xdotool mousemove 640 300 click 1 sleep 0.3 key space
sleep 1
echo "replay playing:  $(measure $APID) % of one core"
# Proof that it played: the timeline's clock, on the screen.
DISPLAY="$DISPLAY_NUM" import -window root "${CPU_SHOT:-/tmp/cpu-playing.png}" 2>/dev/null || true
kill $APID; wait $APID 2>/dev/null || true
