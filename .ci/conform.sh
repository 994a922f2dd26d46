#!/usr/bin/env bash
# `jaus-ocu conform` against a `jaus-ocu sim` (the reference implementation) on loopback, every
# suite, motion allowed: it must pass (exit status 0), and its outputs must agree with each
# other and with the wire: the JUnit XML, read by junitparser (PyPI), has counts that match its
# test cases, a verdict and a reference on every case, frame ranges inside the capture, and
# every evidence frame holds the message it names, read back from the pcapng by tshark
# (.ci/conform-evidence.py); the JSON report has as many checks as the JUnit XML and as many
# frames as the capture; the Markdown report names the verdict. A second run writes the HTML
# report, which must be a whole HTML document with the summary.
# Usage: .ci/conform.sh path/to/jaus-ocu [workdir]
#   Every step is bounded (timeout); the sim's log and the run's output are printed on failure.
set -euo pipefail
exe=$(realpath "$1")
work=${2:-target/conform}
mkdir -p "$work"
work=$(realpath "$work")
here=$(cd "$(dirname "$0")" && pwd)
command -v tshark >/dev/null || { echo "FAIL: tshark is not installed (apt-get install tshark)" >&2; exit 1; }

if [ ! -x "$work/venv/bin/python" ]; then
    python3 -m venv "$work/venv"
fi
timeout 300 "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check 'junitparser>=3.1,<6'

port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export JAUS_OCU_CONFIG_DIR=$work/config
mkdir -p "$JAUS_OCU_CONFIG_DIR"
rm -f "$work"/conform.* "$work"/report.*

sim_pid=
ok=
cleanup() {
    if [ -n "$sim_pid" ]; then
        kill "$sim_pid" 2>/dev/null || true
        wait "$sim_pid" 2>/dev/null || true
    fi
    if [ -z "$ok" ]; then
        echo "--- jaus-ocu sim's log ($work/sim.log):"
        tail -n 50 "$work/sim.log" 2>/dev/null || true
    fi
}
trap cleanup EXIT

# The sim runs for at most 10 minutes whatever happens to this script.
timeout 600 "$exe" sim --bind "127.0.0.1:$port" >"$work/sim.log" 2>&1 &
sim_pid=$!

# The sim answering a probe on its port within 30 s, polled; it must stay up meanwhile.
deadline=$((SECONDS + 30))
until timeout 10 "$exe" probe --connect "127.0.0.1:$port" --no-multicast --bind 127.0.0.1:0 \
    --once --timeout 1 >/dev/null 2>&1; do
    if ! kill -0 "$sim_pid" 2>/dev/null; then
        echo "FAIL: jaus-ocu sim exited before answering on 127.0.0.1:$port"
        exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
        echo "FAIL: jaus-ocu sim not answering a probe on 127.0.0.1:$port within 30 s"
        exit 1
    fi
    sleep 0.2
done

suites=(discovery transport liveness events access-control management manipulator robustness)
suite_args=()
for s in "${suites[@]}"; do suite_args+=(--suite "$s"); done

# conform NAME ARGS...: one bounded run against the sim; its JSON on NAME.json, its log on
# NAME.log; exit status 0 required.
conform() {
    local name=$1 rc=0
    shift
    timeout 300 "$exe" conform --connect "127.0.0.1:$port" --no-multicast --bind 127.0.0.1:0 \
        "$@" >"$work/$name.json" 2>"$work/$name.log" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: jaus-ocu conform $* exited with status $rc (0: every check passed; 1: a check failed; 3: no component; 124: timed out)"
        # The failed checks, whole, wherever they sit in the report.
        python3 - "$work/$name.json" <<'EOF' || true
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit(f"(the JSON report does not read: {e})")
for c in r.get("checks", []):
    if c.get("verdict") == "fail":
        print("failed check:", json.dumps(c, indent=2, ensure_ascii=False))
EOF
        echo "its output:"
        tail -n 100 "$work/$name.json" "$work/$name.log"
        exit 1
    fi
}

start=$SECONDS
conform conform "${suite_args[@]}" --allow-motion \
    --junit "$work/conform.xml" --pcapng "$work/conform.pcapng" --report "$work/report.md" --json
echo "jaus-ocu conform, every suite, motion allowed: exit status 0 in $((SECONDS - start)) s"

timeout 120 "$work/venv/bin/python" "$here/conform-evidence.py" "$work/conform.xml" "$work/conform.pcapng"

# The JSON report against the JUnit XML and the capture; the Markdown report names the result.
frames=$(timeout 60 tshark -r "$work/conform.pcapng" -T fields -e frame.number 2>/dev/null | wc -l)
timeout 60 "$work/venv/bin/python" - "$work/conform.json" "$work/conform.xml" "$frames" "$work/report.md" "${suites[@]}" <<'EOF'
import json, sys
from junitparser import JUnitXml
report, junit, frames, markdown, suites = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
r = json.load(open(report))
x = JUnitXml.fromfile(junit)
problems = []
tests = sum(1 for s in x for _ in s)
if len(r.get("checks", [])) != tests:
    problems.append(f"the JSON report has {len(r.get('checks', []))} checks, the JUnit XML {tests} test cases")
if r.get("frames") != frames:
    problems.append(f"the JSON report counts {r.get('frames')} frames, tshark read {frames} from the capture")
if r.get("result") is None:
    problems.append("the JSON report has no result")
if sorted(r.get("suites", [])) != sorted(suites):
    problems.append(f"the JSON report's suites are {r.get('suites')}, asked for {suites}")
md = open(markdown).read()
if str(r.get("result")) not in md:
    problems.append(f"the Markdown report does not say the result {r.get('result')!r}")
for p in problems:
    print(f"problem: {p}")
if problems:
    sys.exit(f"FAIL: the JSON and Markdown reports disagree with the JUnit XML or the capture")
print(f"OK: the JSON report ({len(r['checks'])} checks, {frames} frames, {r['result']}) and the Markdown report agree")
EOF

# The HTML report: a whole document with the summary.
conform html --report "$work/report.html" --json
html=$work/report.html
if ! head -c 200 "$html" | grep -qi '<!DOCTYPE html>' || ! grep -q '</html>' "$html" \
    || ! grep -q '<h2>Summary</h2>' "$html" || ! grep -q '<li>Component .* at 127.0.0.1:'"$port"': ' "$html"; then
    echo "FAIL: $html is not a whole HTML document with the summary (DOCTYPE, Summary heading, the component line, </html>); its start:"
    head -c 2000 "$html"
    exit 1
fi
echo "OK: the HTML report is a whole document with the summary ($(wc -c <"$html") bytes)"
ok=1
