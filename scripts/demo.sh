#!/usr/bin/env bash
# Runs the router on its embedded default: two virtual ports, no NIC; hugepages when some
# are free (its hugepage files are removed when it stops), else ordinary memory.
# Port `in` replays a generated pcap (IPv4, labelled and deliberately bad frames) in a
# loop; port `out` writes what the router forwards to out/demo-out.pcap. Prints one
# counters line per second and stops after --duration seconds (default 10) or on Ctrl-C.
#
#   scripts/demo.sh [--duration SECONDS] [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

DURATION=10
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
if [ "$BUILD" = 1 ]; then
  cargo build --release --bin mplsrouter
fi
BIN=target/release/mplsrouter

mkdir -p out
# The routes that forward this traffic are dpdk-config/demo-routes.yaml (same generator).
"$BIN" gen-traffic demo --count 1024 --out out/demo-in.pcap

ARGS=(run --config dpdk-config/demo.yaml --duration "$DURATION")
if [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -gt 0 ] 2>/dev/null; then
  ARGS+=(--huge)
fi
echo "+ $BIN ${ARGS[*]}"
exec "$BIN" "${ARGS[@]}"
