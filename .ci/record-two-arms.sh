#!/usr/bin/env bash
# Records 3 s of a two-arm vehicle: two `jaus-ocu sim` processes (126.1.10 and 126.1.11, on
# free ports, with different mounts) recorded by `jaus-ocu record`. The recording the CI's
# readers (mcap-python.sh, mcap-js.sh) check. Two operator notes (one text, one bookmark) are
# written into it with --note: mcap-js.mjs validates the notes channel against its schema.
# Usage: .ci/record-two-arms.sh BINARY OUT.mcap
set -euo pipefail
exe=$1
out=$2
free_port() {
    python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port_a=$(free_port)
port_b=$(free_port)
"$exe" sim --bind "127.0.0.1:$port_a" --tour --id 126.1.10 --mount 0,-0.4,0 >/dev/null 2>&1 &
sim_a=$!
"$exe" sim --bind "127.0.0.1:$port_b" --tour --id 126.1.11 --mount 0,0.4,0,180 >/dev/null 2>&1 &
sim_b=$!
trap 'kill $sim_a $sim_b 2>/dev/null || true' EXIT
"$exe" record --no-multicast --connect "127.0.0.1:$port_a" --connect "127.0.0.1:$port_b" \
    --out "$out" --duration 3 --quiet --note "two arms recorded@1.5" --note "@2"
