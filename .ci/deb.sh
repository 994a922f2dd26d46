#!/usr/bin/env bash
# The Debian package, proven by installing it: builds it (assets/deb/build.sh; cargo-deb from
# crates.io, kept in ~/.cargo/bin), runs lintian on it, installs it with apt-get (which pulls
# in the run-time libraries it declares), checks what it installed using only installed files,
# removes it and checks nothing is left; then installs it once more with the real-time
# capability declined (/etc/jaus-ocu/no-realtime) and removes it again.
# Runs as root (CI). Usage: .ci/deb.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
OUT=$REPO/${1:-target/deb-check}
rm -rf "$OUT"
mkdir -p "$OUT"
NO_RT=/etc/jaus-ocu/no-realtime
export DEBIAN_FRONTEND=noninteractive

fail() {
    echo "deb: FAIL: $*"
    exit 1
}
cleanup() {
    dpkg --purge jaus-ocu >/dev/null 2>&1 || true
    rm -f "$NO_RT"
    rmdir /etc/jaus-ocu 2>/dev/null || true
}
trap cleanup EXIT
cleanup

if ! command -v cargo-deb >/dev/null; then
    echo "deb: cargo install cargo-deb --locked"
    cargo install cargo-deb --locked --quiet
fi
DEB=$(bash assets/deb/build.sh | tail -n 1)
echo "deb: built $DEB ($(du -h "$DEB" | cut -f1))"

echo "deb: lintian (O: overridden, each with its reason in assets/deb/lintian-overrides)"
# (--show-overrides makes --fail-on count overridden tags too: so fail on E:/W: lines, which
# are the tags not overridden.)
lintian --display-info --show-overrides --fail-on none "$DEB" >"$OUT/lintian.txt" 2>&1 \
    || { cat "$OUT/lintian.txt"; fail "lintian did not run"; }
sed 's/^/    /' "$OUT/lintian.txt"
if grep -qE '^[EW]: ' "$OUT/lintian.txt"; then
    fail "lintian reports an error or a warning that is not overridden"
fi

rmem_before=$(cat /proc/sys/net/core/rmem_max)
echo "deb: apt-get install ./$DEB (packages it pulls in:)"
apt-get install -y --no-install-recommends "./$DEB" >"$OUT/install.log" 2>&1 || {
    cat "$OUT/install.log"
    fail "apt-get install"
}
grep -E '^(Setting up|jaus-ocu:)' "$OUT/install.log" | sed 's/^/    /'

# From here on, only what the package installed: run from a directory with no checkout.
cd "$(mktemp -d)"
version=$(jaus-ocu --version)
commit=$(git -C "$REPO" rev-parse --short=12 HEAD)
echo "deb: jaus-ocu --version: $version"
[[ $version == *"(commit $commit"* ]] || fail "--version does not name commit $commit"

# The README's arm file path, found in /usr/share/jaus-ocu/arms/ (no assets/ here).
/usr/bin/jaus-ocu screenshot --arm assets/arms/puma560.toml --out "$OUT/installed.png" --size 800x500 \
    >"$OUT/screenshot.log" 2>&1 || {
    cat "$OUT/screenshot.log"
    fail "/usr/bin/jaus-ocu screenshot"
}
colours=$(identify -format %k "$OUT/installed.png")
echo "deb: /usr/bin/jaus-ocu screenshot: $colours distinct colours"
[ "$colours" -ge 200 ] || fail "the screenshot looks blank"

desktop-file-validate /usr/share/applications/jaus-ocu.desktop || fail "desktop-file-validate"
echo "deb: desktop-file-validate: no complaints"
man -w jaus-ocu >/dev/null || fail "man -w jaus-ocu"
man -w jaus-ocu-replay >/dev/null || fail "man -w jaus-ocu-replay"
echo "deb: man -w: $(man -w jaus-ocu) (and one page per subcommand)"
bash -c 'source /usr/share/bash-completion/completions/jaus-ocu && complete -p jaus-ocu' \
    || fail "the bash completion does not load"
[ -s /usr/share/zsh/vendor-completions/_jaus-ocu ] || fail "no zsh completion"
[ -s /usr/share/fish/vendor_completions.d/jaus-ocu.fish ] || fail "no fish completion"
default=$(xdg-mime query default application/vnd.mcap)
echo "deb: xdg-mime query default application/vnd.mcap: $default"
[ "$default" = jaus-ocu.desktop ] || fail "the .mcap default is not jaus-ocu.desktop"
grep -q 'application/vnd.mcap:\*\.mcap' /usr/share/mime/globs2 || fail "the MIME database has no .mcap"
for size in 16x16 32x32 48x48 256x256 scalable; do
    ls /usr/share/icons/hicolor/$size/apps/jaus-ocu.* >/dev/null || fail "no $size icon"
done
caps=$(getcap /usr/bin/jaus-ocu)
echo "deb: getcap: $caps"
[[ $caps == *cap_sys_nice=ep* ]] || fail "no cap_sys_nice on /usr/bin/jaus-ocu"
[ -f /usr/lib/sysctl.d/60-jaus-ocu.conf ] || fail "no sysctl drop-in"
echo "deb: net.core.rmem_max $rmem_before before, $(cat /proc/sys/net/core/rmem_max) installed"

apt-get remove -y jaus-ocu >"$OUT/remove.log" 2>&1 || {
    cat "$OUT/remove.log"
    fail "apt-get remove"
}
[ ! -e /usr/bin/jaus-ocu ] || fail "/usr/bin/jaus-ocu left (and its capability)"
[ ! -e /usr/lib/sysctl.d/60-jaus-ocu.conf ] || fail "sysctl drop-in left in /usr/lib/sysctl.d"
if ls /etc/sysctl.d/ | grep -q jaus-ocu; then fail "sysctl drop-in left in /etc/sysctl.d"; fi
[ ! -e /var/lib/jaus-ocu ] || fail "/var/lib/jaus-ocu left"
rmem_after=$(cat /proc/sys/net/core/rmem_max)
[ "$rmem_after" = "$rmem_before" ] || fail "net.core.rmem_max $rmem_after after removal, $rmem_before before"
echo "deb: apt-get remove: no binary, no sysctl drop-in, net.core.rmem_max back to $rmem_after"

# Declined: the operator's file, present before installation.
mkdir -p /etc/jaus-ocu
touch "$NO_RT"
cd "$REPO"
apt-get install -y --no-install-recommends "./$DEB" >"$OUT/install-declined.log" 2>&1 || {
    cat "$OUT/install-declined.log"
    fail "apt-get install (declined)"
}
caps=$(getcap /usr/bin/jaus-ocu)
[ -z "$caps" ] || fail "$NO_RT exists, yet getcap says: $caps"
echo "deb: with $NO_RT: getcap shows no capability"
apt-get remove -y jaus-ocu >/dev/null 2>&1 || fail "apt-get remove (declined)"
echo "deb: the package installs, runs and uninstalls cleanly"
