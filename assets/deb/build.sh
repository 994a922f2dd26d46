#!/usr/bin/env bash
# Builds the Debian package: the release binary, its man pages and shell completions
# (`jaus-ocu generate`, from the clap definitions), then `cargo deb --no-build` with
# [package.metadata.deb] in Cargo.toml. Prints the .deb's path.
# Needs cargo-deb: `cargo install cargo-deb --locked`.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --locked --bin jaus-ocu
rm -rf target/generated target/debian/jaus-ocu_*.deb
target/release/jaus-ocu generate man --out target/generated/man >/dev/null
target/release/jaus-ocu generate completions --out target/generated/completions >/dev/null
cargo deb --no-build --locked "$@" >/dev/null
ls target/debian/jaus-ocu_*.deb
