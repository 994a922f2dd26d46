#!/usr/bin/env bash
# The emergency stop through a link that loses 40 % of the datagrams each way (issue 44), on the
# wire: RUNS times (default 10), a fresh `jaus-ocu sim` (so the arm starts READY), a
# `jaus-ocu relay --loss 0.4` in front of it (seed = the run's number, so each run loses other
# datagrams), and `jaus-ocu control --component 126.1.10 --no-multicast --timeout 20 --json
# emergency set` through the relay.
# Prints a line per run and in all:
#   - how many runs were confirmed (exit 0, "result":"confirmed");
#   - per run, how many datagrams control sent before its first SetEmergency (0: the stop
#     went out first) and how many SetEmergencys the relay lost before one reached the arm;
#   - from the control process's start to the first SetEmergency the relay forwarded to the
#     arm, median and max: the relay's log gives each datagram's UNIX time (`unix`), the start
#     is `date +%s.%N` taken just before spawning control (both this machine's real-time
#     clock), so it includes the process's own start-up and the SetEmergencys the relay lost;
#   - control's time to confirmation (`after_s` of its JSON: from the stop's first send to a
#     status received after it saying EMERGENCY), median and max.
# Exits 1 if any run is not confirmed or says "refused" (any client may stop an arm).
# Every process stops by itself (sim under `timeout`, the relay's --duration, control's
# --timeout) and the trap ends those still running. Traffic stays on 127.0.0.1; the ports are
# picked free ones (never 3794, which `control` also queries).
# Usage: .ci/estop-relay.sh BINARY [RUNS]
set -euo pipefail
BIN=$(realpath "$1")
RUNS=${2:-10}
if ! [[ $RUNS =~ ^[0-9]+$ ]] || ((RUNS < 1 || RUNS > 200)); then
    echo "RUNS '$RUNS': give a number of runs from 1 to 200" >&2
    exit 2
fi
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
export JAUS_OCU_CONFIG_DIR=$WORK

free_port() {
    python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# wait_for FILE TEXT SECONDS WHAT: until FILE contains TEXT, at most SECONDS.
wait_for() {
    local deadline=$((SECONDS + $3))
    until grep -qF -- "$2" "$1" 2>/dev/null; do
        if ((SECONDS >= deadline)); then
            echo "FAIL: $4 did not happen within $3 s; $1 says:" >&2
            cat "$1" >&2 || true
            exit 1
        fi
        sleep 0.05
    done
}

for ((i = 1; i <= RUNS; i++)); do
    arm=$(free_port)
    listen=$(free_port)
    timeout 120 "$BIN" sim --bind "127.0.0.1:$arm" 2>"$WORK/sim-$i.err" &
    sim_pid=$!
    PIDS+=("$sim_pid")
    wait_for "$WORK/sim-$i.err" " on udp " 30 "sim $i listening on 127.0.0.1:$arm"
    "$BIN" relay --listen "127.0.0.1:$listen" --to "127.0.0.1:$arm" --loss 0.4 --seed "$i" \
        --duration 60 --log "$WORK/relay-$i.jsonl" >"$WORK/relay-$i.out" 2>"$WORK/relay-$i.err" &
    relay_pid=$!
    PIDS+=("$relay_pid")
    wait_for "$WORK/relay-$i.err" " on udp " 30 "relay $i listening on 127.0.0.1:$listen"
    date +%s.%N >"$WORK/start-$i"
    rc=0
    timeout 60 "$BIN" control --connect "127.0.0.1:$listen" --no-multicast --component 126.1.10 \
        --timeout 20 --json emergency set >"$WORK/control-$i.out" 2>"$WORK/control-$i.err" || rc=$?
    echo "$rc" >"$WORK/rc-$i"
    kill "$relay_pid" "$sim_pid" 2>/dev/null || true
    wait "$relay_pid" "$sim_pid" 2>/dev/null || true
done

python3 - "$WORK" "$RUNS" <<'EOF'
import json, statistics, sys

work, runs = sys.argv[1], int(sys.argv[2])


def read(name):
    try:
        with open(f"{work}/{name}", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def log(i):
    lines = []
    for line in read(f"relay-{i}.jsonl").splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            pass  # the line being written when the relay was ended
    return lines


failed, first_ms, confirm_ms = [], [], []
print(f"{'run':>3} {'exit':>4} {'result':<14} {'sent before stop':>16} "
      f"{'first SetEmergency at arm':>26} {'lost before it':>14} {'confirmed after':>15} "
      f"{'dropped up/down':>15}")
for i in range(1, runs + 1):
    start = float(read(f"start-{i}"))
    rc = int(read(f"rc-{i}") or -1)
    out, err = read(f"control-{i}.out"), read(f"control-{i}.err")
    try:
        result = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        result = {}
    outcome = result.get("outcome") or {}
    lines = log(i)
    stops = [l for l in lines if l.get("dir") == "up" and "SetEmergency" in l.get("messages", [])]
    first = next((l for l in stops if l.get("fate") == "forwarded"), None)
    # What control sent before its first SetEmergency (the stop is meant to go out first).
    ups = [l for l in lines if l.get("dir") == "up"]
    before = next((k for k, l in enumerate(ups) if "SetEmergency" in l.get("messages", [])),
                  len(ups))
    lost = sum(1 for l in stops if first is None or l["unix"] < first["unix"])
    dropped = [sum(1 for l in lines if l.get("dir") == d and l.get("fate") == "dropped")
               for d in ("up", "down")]
    first_text = "never"
    if first is not None:
        first_ms.append((first["unix"] - start) * 1000)
        first_text = f"{first_ms[-1]:.1f} ms"
    confirm_text = ""
    if outcome.get("result") == "confirmed":
        confirm_ms.append(outcome["after_s"] * 1000)
        confirm_text = f"{confirm_ms[-1]:.1f} ms"
    print(f"{i:>3} {rc:>4} {outcome.get('result', '(no JSON)'):<14} {before:>16} {first_text:>26} "
          f"{lost:>14} {confirm_text:>15} {dropped[0]:>7}/{dropped[1]:<7}")
    if rc != 0 or outcome.get("result") != "confirmed":
        failed.append(f"run {i}: exit {rc}, {out.strip() or err.strip()[:300]}")
    if "refused" in out or "refused" in err:
        failed.append(f"run {i} says refused: {(out + err).strip()[:300]}")
    if first is None:
        failed.append(f"run {i}: the relay's log shows no SetEmergency forwarded to the arm")


def spread(xs):
    return f"median {statistics.median(xs):.1f} ms, max {max(xs):.1f} ms" if xs else "none"


print(f"confirmed: {len(confirm_ms)} of {runs} runs (40 % loss each way)")
print(f"control's start to the first SetEmergency forwarded to the arm: {spread(first_ms)}")
print(f"time to confirmation (control's after_s): {spread(confirm_ms)}")
for f in failed:
    print(f"FAIL: {f}", file=sys.stderr)
sys.exit(1 if failed else 0)
EOF
