#!/usr/bin/env bash
# Instructions per packet of the pipeline under callgrind (repeatable on a loaded box).
# Usage: scripts/bench/pipeline-ir.sh [binary] [rounds] [cases...]
# binary defaults to target/release/examples/pipeline_ir (cargo build --release -p net
# --example pipeline_ir). Prints "case Ir/packet".
set -euo pipefail
bin=${1:-target/release/examples/pipeline_ir}
rounds=${2:-1000}
shift 2 2>/dev/null || shift $#
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(mpls_swap mpls_php_pop ler_push2 ipv4_forward ecmp4 mpls_swap_staged ipv4_forward_staged ipv6_forward 6pe_push)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in "${cases[@]}"; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" \
        --toggle-collect='pipeline_ir::run_burst*' "$bin" "$c" "$rounds" >/dev/null 2>"$tmp/err" || {
        cat "$tmp/err" >&2
        exit 1
    }
    ir=$(grep -E '^(summary|totals):' "$tmp/out" | head -1 | awk '{print $2}')
    awk -v c="$c" -v ir="$ir" -v n="$rounds" 'BEGIN { printf "%-20s %7.1f Ir/packet\n", c, ir / ((n + 1) * 32) }'
done
