#!/usr/bin/env bash
# `jaus-ocu serve` (following a `jaus-ocu sim`, arm 126.1.10) is read live by a real client of
# the Foxglove WebSocket protocol: @foxglove/ws-protocol's FoxgloveClient (npm, versions pinned
# in .ci/package.json and .ci/package-lock.json), run by .ci/live-view.mjs. It proves: the server
# is read-only (no clientPublish, services, parameters in its capabilities); every channel's
# JSON Schema compiles (ajv) and every message received is valid against it; the arm's
# specification and arm state come within 2 s of subscribing (latched), also to a client that
# connects again later (--late); joint positions come at 50 Hz +-20 %; positions, specification,
# arm state, transforms and scene all carry data.
# Usage: .ci/live-view.sh path/to/jaus-ocu [workdir] [seconds]
#   The server's log is printed on failure. LIVE_VIEW_RATE (default 50) is the expected
#   positions rate.
set -euo pipefail
exe=$(realpath "$1")
work=${2:-target/live-view}
seconds=${3:-8}
rate=${LIVE_VIEW_RATE:-50}
arm=126.1.10
mkdir -p "$work"
work=$(realpath "$work")
here=$(cd "$(dirname "$0")" && pwd)

# The npm packages, exactly as locked, into the work directory (not the repository).
if ! cmp -s "$here/package-lock.json" "$work/npm/package-lock.json" 2>/dev/null \
    || [ ! -d "$work/npm/node_modules/@foxglove/ws-protocol" ]; then
    rm -rf "$work/npm"
    mkdir -p "$work/npm"
    cp "$here/package.json" "$here/package-lock.json" "$work/npm/"
    (cd "$work/npm" && npm ci --no-audit --no-fund --loglevel=error)
fi
cp "$here/live-view.mjs" "$work/npm/live-view.mjs"

free_port() {
    python3 -c 'import socket, sys; s=socket.socket(socket.AF_INET, getattr(socket, sys.argv[1])); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' "$1"
}
jaus_port=$(free_port SOCK_DGRAM)
ws_port=$(free_port SOCK_STREAM)
export JAUS_OCU_CONFIG_DIR=$work/config
mkdir -p "$JAUS_OCU_CONFIG_DIR"

sim_pid=
serve_pid=
ok=
cleanup() {
    for pid in $serve_pid $sim_pid; do kill "$pid" 2>/dev/null || true; done
    for pid in $serve_pid $sim_pid; do wait "$pid" 2>/dev/null || true; done
    if [ -z "$ok" ]; then
        echo "--- jaus-ocu serve's log ($work/serve.log):"
        tail -n 200 "$work/serve.log" 2>/dev/null || true
        echo "--- jaus-ocu sim's log ($work/sim.log):"
        tail -n 50 "$work/sim.log" 2>/dev/null || true
    fi
}
trap cleanup EXIT

"$exe" sim --bind "127.0.0.1:$jaus_port" --id "$arm" >"$work/sim.log" 2>&1 &
sim_pid=$!
"$exe" serve --connect "127.0.0.1:$jaus_port" --no-multicast --listen "127.0.0.1:$ws_port" \
    >"$work/serve.log" 2>&1 &
serve_pid=$!

# A process of ours still running (not exited, nor an exited child not yet waited for).
alive() {
    local st
    st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $st != Z* ]]
}

# The `ws://` line printed and the WebSocket port completing a handshake (a bare TCP connect
# would be logged as a failed handshake), within 30 s, polled; the server must stay up meanwhile.
url=ws://127.0.0.1:$ws_port
ws_open() {
    (cd "$work/npm" && node --input-type=module -e 'import WebSocket from "ws";
const w = new WebSocket(process.argv[1], ["foxglove.sdk.v1"]);
w.on("open", () => { w.close(); process.exit(0); });
w.on("error", () => process.exit(1));
setTimeout(() => process.exit(1), 2000);' "$url")
}
deadline=$((SECONDS + 30))
until grep -q "ws://" "$work/serve.log" && ws_open; do
    if ! alive "$serve_pid"; then
        echo "FAIL: jaus-ocu serve exited before listening on 127.0.0.1:$ws_port (and printing ws://)"
        exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
        echo "FAIL: jaus-ocu serve not listening on 127.0.0.1:$ws_port with a ws:// line printed within 30 s"
        exit 1
    fi
    sleep 0.2
done

node "$work/npm/live-view.mjs" "$url" "$seconds" "$rate" "$arm"
# The late joiner: connect, disconnect, connect again, the latched state again.
node "$work/npm/live-view.mjs" --late "$url" "$seconds" "$rate" "$arm"
if ! alive "$serve_pid"; then
    echo "FAIL: jaus-ocu serve exited during the check"
    exit 1
fi
# It ends on SIGTERM, within 10 s (else it is killed, and that fails).
kill -TERM "$serve_pid"
(sleep 10; kill -KILL "$serve_pid" 2>/dev/null) &
watchdog=$!
status=0
wait "$serve_pid" || status=$?
kill "$watchdog" 2>/dev/null || true
if [ "$status" = 137 ]; then
    echo "FAIL: jaus-ocu serve still running 10 s after SIGTERM"
    exit 1
fi
echo "jaus-ocu serve ended on SIGTERM (exit status $status)"
serve_pid=
ok=1
echo "OK: jaus-ocu serve read live by FoxgloveClient (@foxglove/ws-protocol): read-only, valid, latched, $rate Hz"
