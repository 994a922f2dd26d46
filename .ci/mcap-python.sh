#!/usr/bin/env bash
# A recording made by `jaus-ocu record` of a vehicle with two arms (two `jaus-ocu sim`, mounted
# left and right, recorded with `--connect A --connect B`) is read by the official Python `mcap`
# reader from PyPI, with the channel and message counts jaus-ocu itself reports; every JSON
# message validates against its channel's JSON Schema (`jsonschema` from PyPI); both arms are in
# the decoded channels (each message naming its arm) and in the Foxglove frame trees
# (.ci/check_mcap.py).
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
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check 'mcap>=1.2' 'jsonschema>=4.18'

"$here/record-two-arms.sh" "$exe" "$work/session.mcap"
"$exe" inspect --summary --json "$work/session.mcap" > "$work/summary.json"
# The two --note of record-two-arms.sh.
EXPECT_NOTES=2 "$work/venv/bin/python" "$here/check_mcap.py" "$work/session.mcap" "$work/summary.json" 126.1.10,126.1.11
