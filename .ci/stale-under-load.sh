#!/usr/bin/env bash
# Staleness measures the link, not the OCU's scheduler (issue 18): the live demo under Xvfb
# (Mesa's software renderer) for SECONDS (default 300) while `stress-ng --cpu 2` keeps both
# cores busy; counts the stale episodes and link losses the network side logged (RUST_LOG
# info). The simulator and the OCU talk over loopback, so any episode would be the machine's,
# not the link's: the target is none.
# Needs Xvfb and stress-ng (apt-get install xvfb stress-ng). Not run by CI (5 minutes).
# Usage: .ci/stale-under-load.sh BINARY [SECONDS]
set -euo pipefail
BIN=$1
SECONDS_=${2:-300}
DISPLAY_NUM=${STALE_DISPLAY:-:95}
WORK=$(mktemp -d)
XPID=
APID=
SPID=
trap 'kill ${XPID:-} ${APID:-} ${SPID:-} 2>/dev/null || true; rm -rf "$WORK"' EXIT
Xvfb "$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
XPID=$!
sleep 1
env -u WAYLAND_DISPLAY -u WAYLAND_SOCKET DISPLAY="$DISPLAY_NUM" XDG_DATA_HOME="$WORK" \
    JAUS_OCU_CONFIG_DIR="$WORK" RUST_LOG=jaus_ocu::net=info \
    "$BIN" demo >/dev/null 2>"$WORK/demo.log" &
APID=$!
# Live first, then the load.
for ((i = 0; i < 300; i++)); do
    grep -q "link live" "$WORK/demo.log" && break
    sleep 0.1
done
grep -q "link live" "$WORK/demo.log" || { echo "the demo never went live" >&2; exit 1; }
stress-ng --cpu 2 --timeout "${SECONDS_}s" --quiet &
SPID=$!
TICKS=$(getconf CLK_TCK)
a=$(awk '{print $14 + $15}' "/proc/$APID/stat")
wait "$SPID" || true
SPID=
b=$(awk '{print $14 + $15}' "/proc/$APID/stat")
stale=$(grep -c " stale at " "$WORK/demo.log" || true)
lost=$(grep -c "link lost" "$WORK/demo.log" || true)
awk -v d=$((b - a)) -v t="$TICKS" -v s="$SECONDS_" \
    'BEGIN { printf "demo under stress-ng --cpu 2: window %.0f %% of one core\n", 100 * d / t / s }'
echo "stale episodes in ${SECONDS_} s: $stale; link lost: $lost"
grep -E " stale at |link lost" "$WORK/demo.log" | head -20 || true
[ "$stale" -eq 0 ] && [ "$lost" -eq 0 ]
