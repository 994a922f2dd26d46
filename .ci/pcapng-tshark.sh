#!/usr/bin/env bash
# `jaus-ocu export --pcapng` of a recording is read by tshark (Wireshark's reader): every
# packet is UDP on the JUDP port of the recording's peers, none malformed or with a bad IP or
# UDP checksum, as many as the recording holds; and `jaus-ocu inspect` reads the export back
# with the same count.
# Usage: .ci/pcapng-tshark.sh path/to/jaus-ocu recording.mcap [workdir]
set -euo pipefail
exe=$(realpath "$1")
recording=$(realpath "$2")
work=${3:-target/pcapng-tshark}
mkdir -p "$work"
work=$(realpath "$work")
command -v tshark >/dev/null || { echo "FAIL: tshark is not installed (apt-get install tshark)" >&2; exit 1; }

out="$work/session.pcapng"
"$exe" export "$recording" --pcapng "$out"
"$exe" inspect --summary --json "$recording" > "$work/summary.json"
read -r want port <<<"$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
ports = {p.rsplit(":", 1)[1] for p in s["peers"]}
if len(ports) != 1:
    sys.exit("FAIL: expected the peers of one JUDP port, got " + ", ".join(sorted(s["peers"])))
print(s["datagrams"]["total"], ports.pop())' "$work/summary.json")"

# tshark runs as root in CI: it says so on stderr, which is not an error.
total=$(tshark -r "$out" -T fields -e frame.number 2>/dev/null | wc -l)
udp=$(tshark -r "$out" -Y "udp.port == $port && ip.flags.mf == 0" -T fields -e frame.number 2>/dev/null | wc -l)
bad=$(tshark -r "$out" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE \
    -Y "_ws.malformed || ip.checksum.status == 2 || udp.checksum.status == 2 || _ws.expert.severity >= 6291456" \
    -T fields -e frame.number 2>/dev/null | wc -l)
"$exe" inspect --summary --json --port "$port" "$out" > "$work/export-summary.json"
back=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["datagrams"]["total"])' "$work/export-summary.json")
if [ "$total" != "$want" ] || [ "$udp" != "$want" ] || [ "$bad" != 0 ] || [ "$back" != "$want" ]; then
    echo "FAIL: recording $want datagrams; tshark read $total packets, $udp UDP on port $port, $bad malformed or with warnings; inspect read back $back" >&2
    exit 1
fi
echo "OK: tshark read all $total packets as UDP on the JUDP port $port (none malformed, checksums good); inspect read back $back"
