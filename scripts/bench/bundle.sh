#!/usr/bin/env bash
# Packs what a bench run needs on another x86-64 Linux box that has no DPDK installed
# (a lent multi-core machine, a container): the release router, dpdk-testpmd, l3fwd, the
# DPDK libraries and PMDs they load, the full view, and (if built) the fuzz targets.
#
#   scripts/bench/bundle.sh [DIR (devbundle)]
#
# On the other box, from a copy of this repository with DIR beside it:
#   bash DIR/run.sh            # needs root: it installs the PMDs in DPDK's plugin dir
# run.sh (scripts/bench/bundle-run.sh) runs scripts/bench/bench.py for 1, 2, 4 and 8
# workers, then each fuzz target on all cores but one, and writes everything under $OUT
# (default /tmp/bundle-out). Bundle size: about 31 MB.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-devbundle}
P=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0
cargo build --release -p mplsrouter
L3FWD=$(scripts/bench/build-l3fwd.sh | tail -n 1)
rm -rf "$B" && mkdir -p "$B"/{bin,lib,pmds,data,fuzz}
cp target/release/mplsrouter "$B"/bin/ && strip "$B"/bin/mplsrouter
cp /usr/bin/dpdk-testpmd "$B"/bin/
cp "$L3FWD" "$B"/bin/l3fwd
plugins=(net_pcap net_null mempool_ring bus_vdev)
# The libraries' closure, except the C runtime every box has; PMDs keep their own dir
# (testpmd's RUNPATH points there, and EAL loads plugins from it).
for f in $( { for b in "$B"/bin/*; do ldd "$b"; done
              for p in "${plugins[@]}"; do ldd "$P/librte_$p.so.23"; done; } |
            awk '{print $3}' | sort -u | grep -v '^$' |
            grep -v '/libc\.so\|/libm\.so\|ld-linux\|libgcc_s\|libpthread\|/libdl\.\|/librt\.so'); do
  r=$(readlink -f "$f")
  case "$r" in
    "$P"/*) cp "$r" "$B/pmds/$(basename "$f")" ;;
    *) cp "$r" "$B/lib/$(basename "$f")" ;;
  esac
done
for p in "${plugins[@]}"; do cp "$(readlink -f "$P/librte_$p.so.23")" "$B/pmds/librte_$p.so.23"; done
cp ../shared/data/ipv4-fullview-2023.txt.gz ../shared/data/ipv6-fullview-2023.txt.gz "$B"/data/
for t in pipeline pipeline6 config wire wire6; do
  f=fuzz/target/x86_64-unknown-linux-gnu/release/$t
  [ -x "$f" ] || continue
  cp "$f" "$B"/fuzz/ && strip "$B"/fuzz/$t
  cp -r fuzz/seeds/$t "$B"/fuzz/seeds-$t
done
cp scripts/bench/bundle-run.sh "$B"/run.sh
du -sh "$B"
