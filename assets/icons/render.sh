#!/usr/bin/env bash
# Renders jaus-ocu.svg to the hicolor PNG sizes the package installs. The PNGs are committed
# (CI and package builds do not render); run this after changing the SVG.
# Needs rsvg-convert (Debian: librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")"
for s in 16 24 32 48 64 128 256; do
    mkdir -p "hicolor/${s}x${s}"
    rsvg-convert -w "$s" -h "$s" jaus-ocu.svg -o "hicolor/${s}x${s}/jaus-ocu.png"
done
