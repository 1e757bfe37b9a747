#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/: wire, wire6, pipeline, pipeline6, config, fpm) for a
# bounded time each, starting from the seed corpus in fuzz/seeds/<target> (new inputs go to
# fuzz/corpus/<target>, not committed). Installs cargo-fuzz when missing. Only the stable
# toolchain is needed: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z flags; AddressSanitizer
# is used when it links (SANITIZER=none to skip it). Prints executions per target; fails
# on the first crash (the reproducer is under fuzz/artifacts/<target>/). A target with a
# dictionary in fuzz/dicts/<target>.dict gets it (-dict=): config's holds YAML structure,
# both files' keys, and the hostile shapes its parser bounds (aliases, alias bombs, deep
# block and flow nesting).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET (60)] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export RUSTC_BOOTSTRAP=1

SECS=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(wire wire6 pipeline pipeline6 config fpm)
SANITIZER=${SANITIZER:-address}
JOBS=${FUZZ_JOBS:-1}

command -v cargo-fuzz > /dev/null || cargo install --locked cargo-fuzz
cd fuzz
for t in "${TARGETS[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  cargo fuzz build -s "$SANITIZER" -O "$t"
  log=$(mktemp)
  # -rss_limit_mb bounds memory per input; -max_len bounds input size (config: 64 KiB).
  max_len=4096
  [ "$t" = config ] && max_len=65536
  dict=()
  [ -f "dicts/$t.dict" ] && dict=(-dict="$PWD/dicts/$t.dict")
  # One job fuzzes in this process; with FUZZ_JOBS > 1 libFuzzer forks workers that log
  # to fuzz-<n>.log in their own directory (so that runs of two targets at once do not
  # share log files).
  jobs=()
  workdir=.
  if [ "$JOBS" -gt 1 ]; then
    workdir=$(mktemp -d "$PWD/jobs.$t.XXXX")
    jobs=(-jobs="$JOBS" -workers="$JOBS")
  fi
  set +e
  (cd "$workdir" && cargo fuzz run --fuzz-dir "$OLDPWD" -s "$SANITIZER" -O "$t" \
    "$OLDPWD/corpus/$t" "$OLDPWD/seeds/$t" -- \
    -max_total_time="$SECS" -rss_limit_mb=2048 \
    -max_len="$max_len" -timeout=10 "${dict[@]}" "${jobs[@]}" -print_final_stats=1) 2>&1 | tee "$log" \
    | grep -E '^(#[0-9]+.*(pulse|DONE)|==|SUMMARY|.*panicked|stat::number_of_executed_units)'
  # The fuzzer's status (errexit is off here): no `|| true` after the pipeline, which
  # would replace PIPESTATUS with its own and report a crash as exit 0.
  rc=${PIPESTATUS[0]}
  set -e
  # With -jobs the workers' own logs hold the stats (the main log repeats them).
  stats_from=("$log")
  compgen -G "$workdir/fuzz-*.log" > /dev/null && stats_from=("$workdir"/fuzz-*.log)
  execs=$(grep -h 'stat::number_of_executed_units' "${stats_from[@]}" 2>/dev/null | awk '{ s += $2 } END { print s + 0 }')
  [ "$workdir" = . ] || rm -rf "$workdir"
  echo "fuzz: $t: $execs executions in ${SECS} s, exit $rc"
  rm -f "$log"
  [ "$rc" = 0 ] || { echo "fuzz: $t crashed; reproducer in fuzz/artifacts/$t/" >&2; exit 1; }
done
