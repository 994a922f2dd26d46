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
# The peers' JUDP ports: the simulator's, and 3794 where `--connect` also looks on the default
# local address (the OCU's own side is port 0 in the export: the recording does not say it).
read -r want ports <<<"$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
ports = sorted({p.rsplit(":", 1)[1] for p in s["peers"]})
if not ports:
    sys.exit("FAIL: the recording names no peers")
print(s["datagrams"]["total"], ",".join(ports))' "$work/summary.json")"

# tshark runs as root in CI: it says so on stderr, which is not an error.
total=$(tshark -r "$out" -T fields -e frame.number 2>/dev/null | wc -l)
port_filter=$(echo "$ports" | sed 's/^/udp.port == /; s/,/ || udp.port == /g')
udp=$(tshark -r "$out" -Y "($port_filter) && ip.flags.mf == 0" -T fields -e frame.number 2>/dev/null | wc -l)
bad=$(tshark -r "$out" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE \
    -Y "_ws.malformed || ip.checksum.status == 2 || udp.checksum.status == 2 || _ws.expert.severity >= 6291456" \
    -T fields -e frame.number 2>/dev/null | wc -l)
back=0
for port in ${ports//,/ }; do
    "$exe" inspect --summary --json --port "$port" "$out" > "$work/export-summary-$port.json"
    n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["datagrams"]["total"])' "$work/export-summary-$port.json")
    back=$((back + n))
done
if [ "$total" != "$want" ] || [ "$udp" != "$want" ] || [ "$bad" != 0 ] || [ "$back" != "$want" ]; then
    echo "FAIL: recording $want datagrams; tshark read $total packets, $udp UDP on ports $ports, $bad malformed or with warnings; inspect read back $back" >&2
    exit 1
fi
echo "OK: tshark read all $total packets as UDP on the JUDP ports $ports (none malformed, checksums good); inspect read back $back"
