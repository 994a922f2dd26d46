#!/usr/bin/env bash
# A silent arm costs nothing (issue 18): `jaus-ocu probe` follows a `jaus-ocu sim`, the sim is
# killed, and once the probe says the link is lost its CPU (utime + stime from /proc/PID/stat,
# all threads) and the datagrams it sends to the dead arm's address (counted by a UDP socket
# bound there, which never answers) are measured over SECONDS (default 10).
# Limits: at most 5 % of one core and 5 datagrams/s. Exit 0 when both hold.
# Usage: .ci/silent-arm.sh BINARY [SECONDS]
set -euo pipefail
BIN=$1
SECONDS_=${2:-10}
WORK=$(mktemp -d)
SIM=
PROBE=
trap 'kill ${SIM:-} ${PROBE:-} 2>/dev/null || true; rm -rf "$WORK"' EXIT
export JAUS_OCU_CONFIG_DIR=$WORK

PORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BIN" sim --bind "127.0.0.1:$PORT" 2>"$WORK/sim.log" &
SIM=$!
# The probe runs until killed, a JSON object every 500 ms (the last line is the newest).
"$BIN" probe --connect "127.0.0.1:$PORT" --no-multicast --json --timeout 30 \
    >"$WORK/probe.jsonl" 2>"$WORK/probe.log" &
PROBE=$!

# Waits (at most $2 s) until the probe's newest object says link $1.
wait_link() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        if tail -n 1 "$WORK/probe.jsonl" 2>/dev/null | grep -q "\"link\":\"$1\""; then
            return 0
        fi
        sleep 0.1
    done
    echo "the probe's link never became $1 within $2 s; its log:" >&2
    tail -n 20 "$WORK/probe.log" >&2
    return 1
}

wait_link live 30
kill -9 "$SIM"
wait "$SIM" 2>/dev/null || true
SIM=
wait_link lost 15

python3 - "$PROBE" "$PORT" "$SECONDS_" <<'EOF'
import os, socket, sys, time
pid, port, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
ticks = os.sysconf("SC_CLK_TCK")

def cpu():
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime

# The dead arm's address: what the probe sends there arrives here and is never answered.
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", port))
s.settimeout(0.05)
c0, t0 = cpu(), time.monotonic()
count = 0
while time.monotonic() - t0 < seconds:
    try:
        s.recv(65536)
        count += 1
    except socket.timeout:
        pass
c1, t1 = cpu(), time.monotonic()
share = 100.0 * (c1 - c0) / ticks / (t1 - t0)
rate = count / (t1 - t0)
print(f"silent arm, {t1 - t0:.1f} s: probe CPU {share:.1f} % of one core, "
      f"{count} datagrams to the arm ({rate:.1f}/s)")
ok = share <= 5.0 and rate <= 5.0
if not ok:
    print("FAILED: limits are 5 % of a core and 5 datagrams/s", file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
