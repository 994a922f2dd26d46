#!/usr/bin/env bash
# Runs `jaus-ocu demo` in a real X window under Xvfb (Mesa software GL) for a few seconds,
# takes a screenshot of the screen and fails if the window is blank.
# Usage: .ci/gui-smoke.sh [BINARY] [OUT.png]
set -euo pipefail
BIN=${1:-target/debug/jaus-ocu}
OUT=${2:-target/gui-smoke.png}
LOG=${OUT%.png}.log
DISPLAY_NUM=:97
Xvfb "$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
XPID=$!
APID=
trap 'kill $XPID ${APID:-} 2>/dev/null || true' EXIT
sleep 1
env -u WAYLAND_DISPLAY -u WAYLAND_SOCKET DISPLAY="$DISPLAY_NUM" XDG_DATA_HOME="$(mktemp -d)" "$BIN" demo >"$LOG" 2>&1 &
APID=$!
sleep 12
if ! kill -0 "$APID" 2>/dev/null; then
    echo "gui smoke: jaus-ocu demo exited early:"
    cat "$LOG"
    exit 1
fi
DISPLAY="$DISPLAY_NUM" import -window root "$OUT"
colours=$(identify -format %k "$OUT")
echo "gui smoke: $colours distinct colours in $OUT"
if [ "$colours" -lt 200 ]; then
    echo "gui smoke: the window looks blank"
    exit 1
fi
