#!/usr/bin/env bash
# The live-view check (.ci/live-view.sh, .ci/live-view.mjs) can fail: run against a stand-in
# server (.ci/live-view-fake.mjs, @foxglove/ws-protocol's FoxgloveServer, no Rust build needed)
# it passes, and it fails, naming the fault, when a message violates its schema, a schema does
# not compile, the capabilities include clientPublish, the latched specification is missing, the
# positions rate is off, a client that connects again gets no latched state, the latched state
# comes too late, the client offers foxglove.websocket.v1 (which the crate refuses), the server
# never listens, or nothing listens at all.
# Usage: .ci/live-view-selftest.sh [workdir]
set -euo pipefail
work=${1:-target/live-view-selftest}
mkdir -p "$work"
work=$(realpath "$work")
here=$(cd "$(dirname "$0")" && pwd)

# A stand-in for the jaus-ocu binary: `sim` idles, `serve` is the fake server (with the faults
# of FAKE_FAULTS), run from the npm directory live-view.sh installs.
fake=$work/fake-jaus-ocu
cat >"$fake" <<EOF
#!/usr/bin/env bash
case \$1 in
    sim) exec sleep 600 ;;
    serve) listen=\${*: -1}
        cp "$here/live-view-fake.mjs" "$work/npm/"
        cd "$work/npm" && exec node live-view-fake.mjs "\${listen##*:}" \$FAKE_FAULTS ;;
    *) exit 2 ;;
esac
EOF
chmod +x "$fake"
broken=$work/broken-jaus-ocu
printf '#!/usr/bin/env bash\n[ "$1" = sim ] && exec sleep 600\necho "error: unrecognized subcommand $1" >&2\nexit 2\n' >"$broken"
chmod +x "$broken"

passed=0
failed=0
# case NAME WANT(pass|fail) EXPECTED_TEXT BIN [FAKE_FAULTS...]
case_() {
    local name=$1 want=$2 text=$3 bin=$4
    shift 4
    local rc=0
    FAKE_FAULTS="$*" bash "$here/live-view.sh" "$bin" "$work" 4 >"$work/$name.out" 2>&1 || rc=$?
    if { [ "$want" = pass ] && [ $rc = 0 ]; } \
        || { [ "$want" = fail ] && [ $rc != 0 ] && grep -q -- "$text" "$work/$name.out"; }; then
        echo "ok: $name ($want${text:+: $text})"
        passed=$((passed + 1))
    else
        echo "NOT OK: $name: wanted $want${text:+ with \"$text\"}, exit status $rc; its output:"
        sed 's/^/    /' "$work/$name.out"
        failed=$((failed + 1))
    fi
}
case_ good pass "" "$fake"
case_ bad-message fail "/jaus/joint_positions message [0-9]*: invalid: /positions must be array" "$fake" --bad-message
case_ bad-schema fail "/jaus/specification: its schema (jaus.Specification) does not compile" "$fake" --bad-schema
case_ client-publish fail "capabilities include clientPublish" "$fake" --client-publish
case_ no-latch fail "no /jaus/specification message at all (latched state missing)" "$fake" --no-latch
case_ late-joiner fail "late: arm 126.1.10: no /jaus/specification message at all" "$fake" --latch-connections 2
case_ latch-slow fail "/jaus/specification came [0-9.]* s after" "$fake" --latch-delay 3000
case_ rate fail "/jaus/joint_positions at [0-9.]* Hz, expected 50 Hz" "$fake" --rate 30
LIVE_VIEW_SUBPROTOCOL=foxglove.websocket.v1 case_ subprotocol fail "connection failed: Server sent no subprotocol" "$fake"
case_ never-listens fail "exited before listening" "$broken"

# Nothing listening: refused at once, clearly.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rc=0
node "$work/npm/live-view.mjs" "ws://127.0.0.1:$port" 4 50 126.1.10 >"$work/refused.out" 2>&1 || rc=$?
if [ $rc != 0 ] && grep -q "connection failed: connect ECONNREFUSED" "$work/refused.out"; then
    echo "ok: refused (fail: ECONNREFUSED)"
    passed=$((passed + 1))
else
    echo "NOT OK: refused: exit status $rc; its output:"
    sed 's/^/    /' "$work/refused.out"
    failed=$((failed + 1))
fi

echo "live-view selftest: $passed passed, $failed failed"
[ "$failed" = 0 ]
