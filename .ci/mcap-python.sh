#!/usr/bin/env bash
# A recording made by `jaus-ocu record` (against `jaus-ocu sim`) is read by the official Python
# `mcap` reader from PyPI, with the channel and message counts jaus-ocu itself reports.
# Usage: .ci/mcap-python.sh path/to/jaus-ocu [workdir]
set -euo pipefail
exe=$(realpath "$1")
work=${2:-target/mcap-python}
mkdir -p "$work"
work=$(realpath "$work")
here=$(cd "$(dirname "$0")" && pwd)

if [ ! -x "$work/venv/bin/python" ]; then
    python3 -m venv "$work/venv"
fi
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check 'mcap>=1.2'

port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$exe" sim --bind "127.0.0.1:$port" --tour >/dev/null 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
"$exe" record --no-multicast --connect "127.0.0.1:$port" --out "$work/session.mcap" --duration 3 --quiet
kill $sim
"$exe" inspect --summary --json "$work/session.mcap" > "$work/summary.json"
"$work/venv/bin/python" "$here/check_mcap.py" "$work/session.mcap" "$work/summary.json"
