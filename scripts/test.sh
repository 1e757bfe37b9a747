#!/usr/bin/env bash
# The whole test suite, as CI runs it: install dependencies, check formatting and lints,
# run every Rust test (unit, property, DPDK vdev integration, the real binary end to end),
# then the script-level suites. Fails on the first failing step.
#
#   scripts/test.sh            everything
#   scripts/test.sh --quick    skip the slower script-level suites (bench smoke, netns)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

QUICK=0
for a in "$@"; do
  case "$a" in
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown option $a" >&2; exit 2 ;;
  esac
done

step() { printf '\n=== %s ===\n' "$*"; }

step "dependencies"
scripts/install-deps.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test"
# Release-built binary for the end-to-end tests keeps them fast; unit tests run in the
# test profile (the pure crates are optimised there, see Cargo.toml).
cargo build --release --bin mplsrouter
MPLSROUTER_BIN="$PWD/target/release/mplsrouter" cargo test --workspace --no-fail-fast 2>&1 | tee target/cargo-test.log
grep -q "test result: ok" target/cargo-test.log

if [ "$QUICK" = 0 ]; then
  for suite in tests/suites/*.sh; do
    [ -e "$suite" ] || continue
    step "suite $(basename "$suite")"
    bash "$suite"
  done
fi

step "all tests passed"
