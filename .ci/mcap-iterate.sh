#!/usr/bin/env bash
# Times @mcap/core iterating the messages of FILE.mcap, every one or (--topic-prefix P) only
# those channels' (.ci/mcap-iterate.mjs); prints one JSON line {"seconds", "messages"}.
# The npm packages are installed as .ci/mcap-js.sh installs them (exactly as locked in
# .ci/package-lock.json) into target/mcap-js/npm, shared with it.
# Usage: .ci/mcap-iterate.sh [--topic-prefix P] FILE.mcap
set -euo pipefail
args=("$@")
file=$(realpath "${args[-1]}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
npm_dir=${MCAP_JS_NPM_DIR:-$root/target/mcap-js/npm}
if ! command -v node >/dev/null; then
    echo "node is not installed (Node.js 18 or newer runs @mcap/core)" >&2
    exit 3
fi
if ! cmp -s "$here/package-lock.json" "$npm_dir/package-lock.json" 2>/dev/null \
    || [ ! -d "$npm_dir/node_modules/@mcap/core" ]; then
    rm -rf "$npm_dir"
    mkdir -p "$npm_dir"
    cp "$here/package.json" "$here/package-lock.json" "$npm_dir/"
    (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
cp "$here/mcap-iterate.mjs" "$npm_dir/mcap-iterate.mjs"
node "$npm_dir/mcap-iterate.mjs" "${args[@]:0:${#args[@]}-1}" "$file"
