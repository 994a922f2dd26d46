#!/usr/bin/env bash
# A recording made by `jaus-ocu record` (against `jaus-ocu sim`) is read by @mcap/core's
# McapIndexedReader and McapStreamReader (npm, versions pinned in .ci/package.json and
# .ci/package-lock.json) with the same message counts as its statistics, the Python reader and
# `jaus-ocu inspect`; every arm of its metadata has its specification and positions in the
# decoded channels and its own Foxglove frame tree; the vendored Foxglove schemas equal the
# @foxglove/schemas package.
# Usage: [EXPECT_ARMS=S.N.C,...] .ci/mcap-js.sh path/to/jaus-ocu [workdir] [recording.mcap]
#   Without a recording, one of two arms is made as .ci/mcap-python.sh makes its own (and
#   EXPECT_ARMS set to them). With
#   MCAP_PYTHON=path/to/python (a Python with the `mcap` package, as mcap-python.sh leaves in
#   its venv) the Python reader's count is compared too.
set -euo pipefail
exe=$(realpath "$1")
work=${2:-target/mcap-js}
mkdir -p "$work"
work=$(realpath "$work")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

# The npm packages, exactly as locked, into the work directory (not the repository).
if ! cmp -s "$here/package-lock.json" "$work/npm/package-lock.json" 2>/dev/null \
    || [ ! -d "$work/npm/node_modules/@mcap/core" ]; then
    rm -rf "$work/npm"
    mkdir -p "$work/npm"
    cp "$here/package.json" "$here/package-lock.json" "$work/npm/"
    (cd "$work/npm" && npm ci --no-audit --no-fund --loglevel=error)
fi
cp "$here/mcap-js.mjs" "$work/npm/mcap-js.mjs"

recording=${3:-}
if [ -z "$recording" ]; then
    recording="$work/session.mcap"
    "$here/record-two-arms.sh" "$exe" "$recording"
    export EXPECT_ARMS=${EXPECT_ARMS:-126.1.10,126.1.11}
    # The two --note of record-two-arms.sh.
    export EXPECT_NOTES=${EXPECT_NOTES:-2}
fi
recording=$(realpath "$recording")
"$exe" inspect --summary --json "$recording" > "$work/summary.json"

python_count=()
if [ -n "${MCAP_PYTHON:-}" ]; then
    python_count=("$("$MCAP_PYTHON" -c 'import sys
from mcap.reader import make_reader
with open(sys.argv[1], "rb") as f:
    print(sum(1 for _ in make_reader(f).iter_messages()))' "$recording")")
fi
node "$work/npm/mcap-js.mjs" "$recording" "$work/summary.json" "$root/assets/foxglove" "${python_count[@]}"
