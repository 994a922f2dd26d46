#!/usr/bin/env bash
# The conformance evidence check (.ci/conform-evidence.py) can fail: given a real run's JUnit
# XML and capture (those .ci/conform.sh leaves in its work directory), the untampered pair
# passes, and so does the pair with a correct evidence item added (a frame and the message it
# holds, found in the capture; an ACK frame when the capture has one); a run without checks
# gets one made for the faults that need a test case; each tampering makes it exit 1 naming the fault: an evidence
# frame beyond the capture, an evidence naming a message ID its frame does not hold, an ACK
# evidence on a frame without an ACK block, a `frames` range past the end of the capture, a
# failures count (of <testsuites>, of a <testsuite>) that disagrees with the test cases, a
# verdict that disagrees with the JUnit result, a test case without a reference, a file that
# is not JUnit XML.
# Usage: .ci/conform-selftest.sh CONFORM_WORKDIR [workdir]
#   CONFORM_WORKDIR: where .ci/conform.sh ran (conform.xml, conform.pcapng, venv with junitparser).
set -euo pipefail
src=$(realpath "${1:-target/conform}")
work=${2:-target/conform-selftest}
mkdir -p "$work"
work=$(realpath "$work")
rm -f "$work/frames.json"
here=$(cd "$(dirname "$0")" && pwd)
py=$src/venv/bin/python
xml=$src/conform.xml
pcap=$src/conform.pcapng
for f in "$py" "$xml" "$pcap"; do
    [ -e "$f" ] || { echo "FAIL: $f missing: run .ci/conform.sh with work directory $src first" >&2; exit 1; }
done

# tamper MODE OUT: writes the run's JUnit XML with one fault (or none) to OUT.
tamper() {
    timeout 60 "$py" - "$here/conform-evidence.py" "$xml" "$pcap" "$1" "$2" "$work/frames.json" <<'EOF'
import importlib.util, json, os, sys
import xml.etree.ElementTree as ET
sys.dont_write_bytecode = True  # no __pycache__ in .ci/
spec = importlib.util.spec_from_file_location("evidence", sys.argv[1])
ev = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ev)
src, pcap, mode, out, cache = sys.argv[2:7]
tree = ET.parse(src)
root = tree.getroot()
# The capture's frames, read by tshark once for every mode.
if not os.path.exists(cache):
    json.dump({n: b.hex() for n, b in ev.frames_of(pcap).items()}, open(cache, "w"))
frames = {int(n): bytes.fromhex(h) for n, h in json.load(open(cache)).items()}
last = max(frames) if frames else 0

def first_case():
    """The first test case; one made (and counted) when the run had none."""
    case = root.find("./testsuite/testcase")
    if case is not None:
        return case
    suite = root.find("./testsuite")
    if suite is None:
        suite = ET.SubElement(root, "testsuite", name="selftest", tests="0", failures="0", errors="0", skipped="0")
    case = ET.SubElement(suite, "testcase", classname="conform.selftest", name="selftest.made")
    props = ET.SubElement(case, "properties")
    ET.SubElement(props, "property", name="verdict", value="pass")
    ET.SubElement(props, "property", name="reference", value="selftest")
    for el in (suite, root):
        el.set("tests", str(int(el.get("tests", "0")) + 1))
    return case

def add_property(case, name, value):
    props = case.find("properties")
    if props is None:
        props = ET.SubElement(case, "properties")
    ET.SubElement(props, "property", name=name, value=value)

def message_frame():
    """A frame holding a message, and its ID."""
    for n in sorted(frames):
        for flags, payload in ev.blocks(frames[n]):
            if (flags >> 6) & 3 in (0, 1) and len(payload) >= 2:
                return n, int.from_bytes(payload[:2], "little")
    sys.exit("the capture holds no message at all: nothing to name")

if mode == "none":
    pass
elif mode == "good-evidence":
    n, ident = message_frame()
    add_property(first_case(), "evidence", f"{n}:0x{ident:04X}:Selftest")
elif mode == "good-ack":
    n = next((n for n in sorted(frames) if ev.holds(frames[n], None)), None)
    if n is not None:
        add_property(first_case(), "evidence", f"{n}:-:ACK")
elif mode == "frame-beyond":
    add_property(first_case(), "evidence", f"{last + 1}:0x0001:Beyond")
elif mode == "wrong-id":
    n, ident = message_frame()
    held = {int.from_bytes(p[:2], "little") for _, p in ev.blocks(frames[n]) if len(p) >= 2}
    wrong = next(i for i in range(0x4001, 0x10000) if i not in held)
    add_property(first_case(), "evidence", f"{n}:0x{wrong:04X}:Wrong")
elif mode == "ack-missing":
    n = next((n for n in sorted(frames) if not ev.holds(frames[n], None)), None)
    if n is None:
        sys.exit("every frame holds an ACK: nothing to name")
    add_property(first_case(), "evidence", f"{n}:-:ACK")
elif mode == "frames-past-end":
    add_property(first_case(), "frames", f"1-{last + 1}")
elif mode == "failures-total":
    root.set("failures", str(int(root.get("failures", "0")) + 1))
elif mode == "failures-suite":
    first_case()
    suite = root.find("./testsuite")
    suite.set("failures", str(int(suite.get("failures", "0")) + 1))
elif mode == "verdict-result":
    case = first_case()
    for p in case.iter("property"):
        if p.get("name") == "verdict":
            p.set("value", "FAIL" if p.get("value") != "FAIL" else "pass")
elif mode == "no-reference":
    case = first_case()
    props = case.find("properties")
    for p in list(props):
        if p.get("name") == "reference":
            props.remove(p)
elif mode == "not-junit":
    open(out, "w").write("<html><body>not JUnit</body></html>\n")
    sys.exit(0)
else:
    sys.exit(f"unknown mode {mode}")
tree.write(out, encoding="UTF-8", xml_declaration=True)
EOF
}

passed=0
failed=0
# case_ MODE WANT(pass|fail) EXPECTED_TEXT
case_() {
    local mode=$1 want=$2 text=$3 rc=0
    if ! tamper "$mode" "$work/$mode.xml" >"$work/$mode.out" 2>&1; then
        echo "NOT OK: $mode: could not make the tampered file:"
        sed 's/^/    /' "$work/$mode.out"
        failed=$((failed + 1))
        return
    fi
    timeout 120 "$py" "$here/conform-evidence.py" "$work/$mode.xml" "$pcap" >"$work/$mode.out" 2>&1 || rc=$?
    if { [ "$want" = pass ] && [ $rc = 0 ]; } \
        || { [ "$want" = fail ] && [ $rc = 1 ] && grep -q -- "$text" "$work/$mode.out"; }; then
        echo "ok: $mode ($want${text:+: $text})"
        passed=$((passed + 1))
    else
        echo "NOT OK: $mode: wanted $want${text:+ with \"$text\"}, exit status $rc; its output:"
        sed 's/^/    /' "$work/$mode.out"
        failed=$((failed + 1))
    fi
}

case_ none pass ""
case_ good-evidence pass ""
case_ good-ack pass ""
case_ frame-beyond fail "is not in the capture"
case_ wrong-id fail "does not hold message"
case_ ack-missing fail "holds no ACK block"
case_ frames-past-end fail "not in the capture"
case_ failures-total fail "testsuites: failures="
case_ failures-suite fail "failures=.* but its test cases make"
case_ verdict-result fail "but the JUnit result is"
case_ no-reference fail "no reference property"
case_ not-junit fail "not JUnit XML"

echo "conform evidence selftest: $passed ok, $failed not ok"
[ "$failed" = 0 ]
