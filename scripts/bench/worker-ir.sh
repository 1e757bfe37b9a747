#!/usr/bin/env bash
# Instructions per packet of the whole worker loop under callgrind (issue #21): one
# Worker::poll per burst of 32 on real mbufs (crates/router/examples/worker_ir.rs: EAL
# without hugepages, net_ring source, net_null sink). Prints per packet: Ir in all, in
# the pipeline (functions net::*), in DPDK (the ring PMD's RX, the null PMD's TX, which
# frees each mbuf, the mempool, the C shims) and in the worker's own code (the rest:
# verdict dispatch, counters, TX buffers, the loop). Repeatable on a loaded box.
# Usage: scripts/bench/worker-ir.sh [binary] [rounds] [cases...]
# binary defaults to target/release/examples/worker_ir (cargo build --release -p router
# --example worker_ir).
set -euo pipefail
bin=${1:-target/release/examples/worker_ir}
rounds=${2:-2000}
shift 2 2>/dev/null || shift $#
cases=("$@")
# The default covers each family's fast path: a change to one family's code can move
# another's through the compiler's inlining (session 16: an Lpm4 change cost IPv6 14 Ir).
[ ${#cases[@]} -gt 0 ] || cases=(mpls_swap mpls_php_pop ipv4_forward ler_push2 ecmp4_ipv4
    ipv6_forward 6pe_push mpls_pop_lookup6 mixed4 half_drop)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-19s %8s %8s %8s %8s\n' 'case (per pkt)' Ir/pkt pipeline dpdk worker
for c in "${cases[@]}"; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" \
        --toggle-collect='worker_ir::poll_once*' "$bin" "$c" "$rounds" >"$tmp/stdout" 2>"$tmp/err" || {
        cat "$tmp/err" "$tmp/stdout" >&2
        exit 1
    }
    callgrind_annotate --auto=no --threshold=100 "$tmp/out" >"$tmp/ann" 2>/dev/null
    python3 - "$c" "$rounds" "$tmp/ann" <<'PY'
import re, sys
case, rounds, ann = sys.argv[1], int(sys.argv[2]), sys.argv[3]
k = rounds * 32
total = pipe = dpdk = 0
for line in open(ann):
    m = re.match(r"\s*([\d,]+) \(.*?\)\s+(.*)$", line)
    if not m:
        continue
    ir, rest = int(m.group(1).replace(",", "")), m.group(2)
    if rest.startswith("PROGRAM TOTALS"):
        total = ir
        continue
    obj = re.search(r" \[(.*)\]$", rest)
    # "file:function": the first colon that is not half of a "::".
    fn = re.split(r"(?<!:):(?!:)", rest[: obj.start()] if obj else rest, maxsplit=1)[-1]
    if fn.startswith("net::"):
        pipe += ir
    # DPDK is linked statically: its PMDs' functions (no debug info, "???:eth_ring_rx")
    # sit in the example's own binary, so the file, not the object, says they are C.
    elif (rest.startswith("???") or fn.startswith(("shim_", "rte_"))
          or (obj and "/target/" not in obj.group(1))):
        dpdk += ir
print(f"{case:<19} {total/k:8.1f} {pipe/k:8.1f} {dpdk/k:8.1f} {(total-pipe-dpdk)/k:8.1f}")
PY
done
