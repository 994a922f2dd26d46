#!/usr/bin/env bash
# The window at the three sizes an operator meets (800x600, a 1280x800 laptop, a 1920x1080 desk):
# the demo, a 7-joint arm with long joint names (tests/data/arms/long-names.toml), two arms of one
# vehicle, and an emergency with control held (the banner's two steps), each rendered offscreen
# by `jaus-ocu screenshot` (no display needed).
# Usage: .ci/screenshots.sh BINARY [OUT_DIR]   (default OUT_DIR: screenshots/window-fit)
set -euo pipefail
BIN=$1
OUT=${2:-screenshots/window-fit}
mkdir -p "$OUT"
LONG=tests/data/arms/long-names.toml
for size in 800x600 1280x800 1920x1080; do
    "$BIN" screenshot --size "$size" --out "$OUT/$size-demo.png"
    "$BIN" screenshot --size "$size" --arm "$LONG" --out "$OUT/$size-long-names.png"
    "$BIN" screenshot --size "$size" --scenario vehicle-two-arms --out "$OUT/$size-two-arms.png"
    "$BIN" screenshot --size "$size" --arm "$LONG" --scenario emergency-held \
        --out "$OUT/$size-emergency.png"
done
ls "$OUT"
