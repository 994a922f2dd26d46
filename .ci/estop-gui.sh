#!/usr/bin/env bash
# The emergency stop pressed while the link is cut, as an operator sees it (issue 44). Run as
# root from the project's root, in a network namespace of its own so the link can be cut:
#   unshare -n bash .ci/estop-gui.sh [BINARY] [OUT_DIR]
# The demo under Xvfb; control requested (its button), loopback taken down, E-STOP clicked,
# screenshots while the stop is pending, loopback back up, a screenshot of the confirmation.
# Not part of CI (it needs unshare); screenshots/stop-pending.png was made with it.
set -u
BIN=${1:-target/debug/jaus-ocu}
OUT=${2:-target/estop-gui}
mkdir -p "$OUT"

ip link set lo up
Xvfb :95 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
XPID=$!
sleep 1
export DISPLAY=:95
env -u WAYLAND_DISPLAY -u WAYLAND_SOCKET XDG_DATA_HOME="$(mktemp -d)" JAUS_OCU_CONFIG_DIR="$(mktemp -d)" "$BIN" demo > "$OUT/demo.log" 2>&1 &
APID=$!
sleep 15
WID=$(xdotool search --onlyvisible --name "jaus" | head -1)
echo "window $WID"
xdotool windowfocus --sync $WID
xdotool mousemove 1035 15 click 1
sleep 3
import -window root "$OUT"/estop-0-control.png
ip link set lo down
sleep 4
xdotool mousemove 82 15 click 1
sleep 3
import -window root "$OUT"/estop-1-pending.png
sleep 4
import -window root "$OUT"/estop-2-pending-later.png
ip link set lo up
sleep 6
import -window root "$OUT"/estop-3-confirmed.png
kill $APID $XPID 2>/dev/null
wait 2>/dev/null
tail -5 "$OUT/demo.log"
