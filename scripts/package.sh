#!/usr/bin/env bash
# Builds the Debian package with cargo-deb and prints its path (last line of stdout).
# The package lands in target/debian/ (or --out DIR): mplsrouter_<version>-1_<arch>.deb.
#
#   scripts/package.sh [--no-build] [--out DIR]
#
#   --no-build   package the existing target/release/mplsrouter (cargo build --release
#                --bin mplsrouter) instead of building it
#   --out DIR    where to write the .deb (default target/debian)
#
# Before cargo-deb runs, this generates under target/package/: the man pages and the
# bash/zsh/fish completions (from the binary being packaged: `mplsrouter generate-man`,
# `generate-completions`) and /etc/mplsrouter/startup.yaml (dpdk-config/
# baremetal.example.yaml with paths of the installed system and the routes file on), and
# checks that conffile with packaging/routes.yaml. What goes where: [package.metadata.deb]
# in Cargo.toml. Needs cargo-deb (scripts/install-deps.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

BUILD=1
OUT=target/debian
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0; shift ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { echo "package: $*" >&2; }
die() { log "$*"; exit 1; }

command -v cargo-deb >/dev/null || die "cargo-deb is missing: scripts/install-deps.sh installs it"
BIN=target/release/mplsrouter
if [ "$BUILD" = 1 ]; then
  cargo build --release --locked --bin mplsrouter >&2
fi
[ -x "$BIN" ] || die "no $BIN: cargo build --release --bin mplsrouter (or drop --no-build)"

# The package carries DPDK inside the binary (release builds link its static archives,
# every PMD included) and depends on no librte-* package: a binary that loads DPDK's
# shared libraries (a MPLSROUTER_DPDK_LINK=shared build) would need the EAL's plugins,
# which no dpkg-shlibdeps can see.
if objdump -p "$BIN" | grep -qE '^ *NEEDED +librte_'; then
  die "$BIN loads DPDK's shared libraries; package a release build that links them in (unset MPLSROUTER_DPDK_LINK)"
fi

STAGE=target/package
rm -rf "$STAGE"
mkdir -p "$STAGE/etc"
"$BIN" generate-man "$STAGE/man"
"$BIN" generate-completions "$STAGE/completions"

# startup.yaml: the bare-metal example, pointing at installed paths, routes file on.
sed -e 's|^# routes: routes\.yaml$|routes: routes.yaml|' \
    -e 's|dpdk-config/baremetal\.example\.yaml|/etc/mplsrouter/startup.yaml|g' \
    -e 's|dpdk-config/routes\.example\.yaml|/usr/share/doc/mplsrouter/examples/routes.example.yaml|g' \
    -e 's|scripts/setup-hugepages\.sh|/usr/lib/mplsrouter/setup-hugepages.sh|g' \
    -e 's|scripts/bind-nic\.sh|/usr/lib/mplsrouter/bind-nic.sh|g' \
    dpdk-config/baremetal.example.yaml >"$STAGE/etc/startup.yaml"
grep -q '^routes: routes\.yaml$' "$STAGE/etc/startup.yaml" ||
  die "dpdk-config/baremetal.example.yaml has no '# routes: routes.yaml' line to enable"
if grep -n 'dpdk-config/\|scripts/' "$STAGE/etc/startup.yaml" >&2; then
  die "startup.yaml still names repository paths (above): extend the substitutions"
fi
cp packaging/routes.yaml "$STAGE/etc/routes.yaml"
out=$("$BIN" check "$STAGE/etc/startup.yaml" 2>&1) ||
  { printf '%s\n' "$out" >&2; die "the packaged startup.yaml/routes.yaml do not pass mplsrouter check"; }

mkdir -p "$OUT"
deb=$(cargo deb --no-build --strip --locked --output "$OUT" -q)
log "$deb"
echo "$deb"
