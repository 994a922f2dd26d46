#!/usr/bin/env bash
# A tool-point jog held about 1 s in the real window and let go, read on the wire (issue 44).
# Run as root from the project's root, in a network namespace of its own (tshark on its
# loopback sees only this run):
#   unshare -n bash .ci/tooljog-gui.sh [BINARY] [OUT_DIR]
# The demo under Xvfb; control requested (its button); tool mode; `=` held while the access
# timeout is acknowledged (nothing may move: a fresh press is needed), let go, held 1.05 s,
# let go. Then: jaus-ocu inspect --port <the sim's port> OUT_DIR/wire.pcapng. Not part of CI.
set -u
BIN=${1:-target/debug/jaus-ocu}
OUT=${2:-target/tooljog-gui}
mkdir -p "$OUT"
ip link set lo up
Xvfb :94 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
XPID=$!
sleep 1
export DISPLAY=:94
tshark -i lo -f udp -w "$OUT/wire.pcapng" -q >/dev/null 2>&1 &
TPID=$!
env -u WAYLAND_DISPLAY -u WAYLAND_SOCKET XDG_DATA_HOME="$(mktemp -d)" JAUS_OCU_CONFIG_DIR="$(mktemp -d)" "$BIN" demo > "$OUT/demo.log" 2>&1 &
APID=$!
sleep 15
WID=$(xdotool search --onlyvisible --name "jaus" | head -1)
xdotool windowfocus --sync $WID
xdotool mousemove 1035 15 click 1
sleep 3
xdotool mousemove 108 94 click 1
sleep 1
xdotool mousemove 640 200
xdotool keydown equal
sleep 0.5
import -window root "$OUT/1-held.png"
xdotool mousemove 110 238 click 1
sleep 0.5
import -window root "$OUT/2-acked-still-held.png"
xdotool keyup equal
sleep 1
date +%s.%N > "$OUT/press.txt"
xdotool keydown equal
sleep 1.05
xdotool keyup equal
date +%s.%N >> "$OUT/press.txt"
sleep 1
import -window root "$OUT/3-after.png"
sleep 5
import -window root "$OUT/4-later.png"
kill $APID $XPID $TPID 2>/dev/null
wait 2>/dev/null
