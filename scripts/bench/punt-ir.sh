#!/usr/bin/env bash
# Instructions per packet of a worker's decision for the slow-path pressure mixes (issue
# #23) under callgrind: the pipeline plus the punt admission (crates/router/examples/
# punt_ir.rs). Prints per packet of the mix: Ir in all, Ir in the pipeline (functions
# net::*, i.e. Pipeline::process_burst and what it calls), Ir in the worker's part (the
# verdict loop, PuntQueues::admit: marks, budget, class), and the cache simulation's
# first-level data misses (D1mr+D1mw) and last-level ones (DLmr+DLmw).
# Repeatable on a loaded box, unlike cycles.
# Usage: scripts/bench/punt-ir.sh [binary] [rounds] [mixes...]
# binary defaults to target/release/examples/punt_ir (cargo build --release -p router
# --example punt_ir).
set -euo pipefail
bin=${1:-target/release/examples/punt_ir}
rounds=${2:-2000}
shift 2 2>/dev/null || shift $#
mixes=("$@")
[ ${#mixes[@]} -gt 0 ] || mixes=(punt-noroute punt-glean punt-ttl1 punt-echo punt-arp)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-13s %8s %8s %8s %8s %8s\n' 'mix (per pkt)' Ir/pkt pipeline worker D1miss LLmiss
for m in "${mixes[@]}"; do
    valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file="$tmp/out" \
        --toggle-collect='punt_ir::run_burst*' "$bin" "$m" "$rounds" >"$tmp/stdout" 2>"$tmp/err" || {
        cat "$tmp/err" >&2
        exit 1
    }
    callgrind_annotate --threshold=100 "$tmp/out" >"$tmp/ann" 2>/dev/null
    python3 - "$m" "$rounds" "$tmp/out" "$tmp/ann" <<'PY'
import re, sys
mix, rounds, out, ann = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
k = rounds * 32
ev = next(l.split()[1:] for l in open(out) if l.startswith(("summary:", "totals:")))
ev += ["0"] * (9 - len(ev))  # trailing zero events are left out
ir, d1, dl = int(ev[0]), int(ev[4]) + int(ev[5]), int(ev[7]) + int(ev[8])
pipe = 0
for line in open(ann):
    m = re.match(r"\s*([\d,]+) \(.*?\)\s+.*?\s((?:[^\s:]+:(?!:))?)(\S+)(?: \[.*\])?$", line)
    if not m:
        continue
    fn = m.group(3)
    if fn.startswith("net::") and not fn.startswith("net::wire::ip_packet"):
        pipe += int(m.group(1).replace(",", ""))
print(f"{mix:<13} {ir/k:8.1f} {pipe/k:8.1f} {(ir-pipe)/k:8.1f} {d1/k:8.3f} {dl/k:8.4f}")
PY
done
