#!/usr/bin/env python3
"""The JUnit XML of `jaus-ocu conform` agrees with itself and with its evidence capture.

Reads the JUnit XML with junitparser (PyPI) and the capture with tshark, and checks:
- the counts (tests, failures, errors, skipped) of <testsuites> and of every <testsuite> are
  those of its test cases, and every test case's verdict property agrees with its result
  (FAIL with <failure>, n/a with <skipped>, pass/warning with neither);
- every test case has the properties `verdict` and `reference`;
- a test case's `frames` property "N-M" names frames N..M of the capture;
- every `evidence` property (one per item) `frame:0xIDID:name` names a frame of the capture that holds message
  0xIDID (one of its JUDP blocks is a single-packet or first-fragment block whose payload
  starts with the ID, little-endian), `frame:-:ACK` a frame with an ACK block (wire reference
  §4.4), and `frame:-:other` (a datagram sent broken on purpose) a frame that exists.
Prints one line per problem and a summary; exit status 1 on any problem.

Usage: conform-evidence.py JUNIT.xml CAPTURE.pcapng
"""

import re
import subprocess
import sys

from junitparser import Error, Failure, JUnitXml, Properties, Skipped

JUDP_VERSION = 2
BLOCK_OVERHEAD = 14  # type/HC, data size (2), flags, destination (4), source (4), sequence (2)
ACK = 3


def frames_of(pcapng):
    """frame number -> UDP payload (bytes), from one tshark run."""
    out = subprocess.run(
        ["tshark", "-r", pcapng, "-T", "fields", "-e", "frame.number", "-e", "udp.payload"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    frames = {}
    for line in out.splitlines():
        number, _, payload = line.partition("\t")
        if number.strip():
            frames[int(number)] = bytes.fromhex(payload.replace(":", "").strip())
    return frames


def blocks(datagram):
    """The JUDP blocks (flags, payload) of a datagram (wire reference §4.2); stops at the first
    block that does not fit (a malformed datagram yields what came before it)."""
    if not datagram or datagram[0] != JUDP_VERSION:
        return
    at = 1
    while at + BLOCK_OVERHEAD <= len(datagram):
        size = int.from_bytes(datagram[at + 1 : at + 3], "little")
        if size < BLOCK_OVERHEAD or at + size > len(datagram):
            return
        flags = datagram[at + 3]
        yield flags, datagram[at + 12 : at + size - 2]
        at += size


def holds(datagram, ident):
    """Whether the datagram holds message `ident` (an int) or, for None, an ACK block."""
    for flags, payload in blocks(datagram):
        ack_nak = (flags >> 4) & 3
        data = (flags >> 6) & 3
        if ident is None:
            if ack_nak == ACK:
                return True
        elif data in (0, 1) and payload[:2] == ident.to_bytes(2, "little"):
            return True
    return False


def describe(datagram):
    """A short account of a frame's blocks, for a problem line."""
    parts = []
    for flags, payload in blocks(datagram):
        ack_nak, data = (flags >> 4) & 3, (flags >> 6) & 3
        if ack_nak in (2, 3) and not payload:
            parts.append("NAK" if ack_nak == 2 else "ACK")
        elif data in (0, 1) and len(payload) >= 2:
            parts.append("0x%04X" % int.from_bytes(payload[:2], "little"))
        else:
            parts.append("fragment(data flags %d)" % data)
    if not parts:
        return "no JUDP block (%d bytes)" % len(datagram)
    return "blocks " + ", ".join(parts)


VERDICT_RESULT = {"FAIL": "failure", "n/a": "skipped", "not run": "skipped", "pass": "none", "warning": "none"}


def result_of(case):
    kinds = [r for r in case.result]
    if any(isinstance(r, Failure) for r in kinds):
        return "failure"
    if any(isinstance(r, Error) for r in kinds):
        return "error"
    if any(isinstance(r, Skipped) for r in kinds):
        return "skipped"
    return "none"


def properties_of(case):
    props = {}
    block = case.child(Properties)
    if block is not None:
        for p in block:
            props.setdefault(p.name, []).append(p.value)
    return props


def check_evidence(where, value, frames, problems):
    checked = 0
    for item in [value]:
        m = re.fullmatch(r"(\d+):(0x[0-9A-Fa-f]{4}|-):(.+)", item, re.S)
        if not m:
            problems.append(f"{where}: evidence item {item!r} is not frame:0xIDID:name or frame:-:name")
            continue
        frame, ident, name = int(m.group(1)), m.group(2), m.group(3)
        if frame not in frames:
            problems.append(
                f"{where}: evidence {item}: frame {frame} is not in the capture ({len(frames)} frames)"
            )
            continue
        checked += 1
        if ident == "-":
            if name == "ACK" and not holds(frames[frame], None):
                problems.append(f"{where}: evidence {item}: frame {frame} holds no ACK block ({describe(frames[frame])})")
            continue
        if not holds(frames[frame], int(ident, 16)):
            problems.append(
                f"{where}: evidence {item}: frame {frame} does not hold message {ident} ({describe(frames[frame])})"
            )
    return checked


def check_case(suite, case, frames, problems):
    """Checks one test case; returns the number of evidence items whose frame was read."""
    where = f"{suite.name}/{case.name}"
    props = properties_of(case)
    for need in ("verdict", "reference"):
        if not props.get(need) or not props[need][0].strip():
            problems.append(f"{where}: no {need} property")
    verdict = (props.get("verdict") or [""])[0]
    want = VERDICT_RESULT.get(verdict)
    got = result_of(case)
    if verdict and want is None:
        problems.append(f"{where}: verdict {verdict!r} is none of {', '.join(VERDICT_RESULT)}")
    elif want is not None and got != want:
        problems.append(f"{where}: verdict {verdict} but the JUnit result is {got}")
    for value in props.get("frames", []):
        m = re.fullmatch(r"(\d+)-(\d+)", value)
        if not m or int(m.group(1)) > int(m.group(2)) or int(m.group(1)) < 1:
            problems.append(f"{where}: frames {value!r} is not N-M with 1 <= N <= M")
            continue
        missing = [n for n in range(int(m.group(1)), int(m.group(2)) + 1) if n not in frames]
        if missing:
            problems.append(
                f"{where}: frames {value}: {len(missing)} not in the capture ({len(frames)} frames), first {missing[0]}"
            )
    return sum(check_evidence(where, v, frames, problems) for v in props.get("evidence", []))


def counts(cases):
    results = [result_of(c) for c in cases]
    return {
        "tests": len(cases),
        "failures": results.count("failure"),
        "errors": results.count("error"),
        "skipped": results.count("skipped"),
    }


def compare(where, element, want, problems):
    for key, n in want.items():
        stated = getattr(element, key)
        if stated is None:
            stated = 0
        if stated != n:
            problems.append(f"{where}: {key}={stated} but its test cases make {n}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    junit, pcapng = sys.argv[1], sys.argv[2]
    problems = []
    try:
        xml = JUnitXml.fromfile(junit)
    except Exception as e:  # noqa: BLE001 - any parse error is the finding
        print(f"FAIL: {junit}: not JUnit XML junitparser reads: {e}")
        return 1
    try:
        frames = frames_of(pcapng)
    except (subprocess.CalledProcessError, OSError) as e:
        err = getattr(e, "stderr", "") or ""
        print(f"FAIL: tshark could not read {pcapng}: {e} {err.strip()}")
        return 1
    all_cases = []
    evidence = 0
    suites = list(xml)
    for suite in suites:
        cases = list(suite)
        all_cases += cases
        compare(f"testsuite {suite.name}", suite, counts(cases), problems)
        for case in cases:
            evidence += check_case(suite, case, frames, problems)
    compare("testsuites", xml, counts(all_cases), problems)
    for p in problems:
        print(f"problem: {p}")
    c = counts(all_cases)
    summary = (
        f"{len(suites)} suites, {c['tests']} test cases ({c['failures']} failed, {c['skipped']} n/a), "
        f"{evidence} evidence frames read from {len(frames)} frames of {pcapng}"
    )
    if problems:
        print(f"FAIL: {len(problems)} problems; {summary}")
        return 1
    print(f"OK: counts, properties, frame ranges and evidence agree; {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
