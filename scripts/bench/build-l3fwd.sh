#!/usr/bin/env bash
# Builds DPDK's l3fwd example from the sources Debian's dpdk-doc ships, patched for a
# full Internet table, into target/bench/l3fwd/ and prints the binary's path.
#
#   scripts/bench/build-l3fwd.sh [--src DIR] [--out DIR] [--shared] [--burst N]
#
# --burst N (8 to 64, default 32, the example's own) builds it with MAX_PKT_BURST N (its
# RX burst and TX buffer size), into target/bench/l3fwd-bN unless --out says otherwise.
# Both of the example's builds are made: `l3fwd-static` (DPDK's static archives, as the
# router's release build links them; printed by default) and `l3fwd-shared` (DPDK's
# shared libraries, the example's default; printed with --shared).
#
# The stock example is sized for a demo: 1,024 IPv4 rules, 256 tbl8 groups and a pool
# of at least 8,192 mbufs. The bench feeds it the same ~900k prefixes as the router, and
# net_pcap's infinite_rx mode takes one mbuf per pcap frame from the pool at queue
# setup, so the copy is patched (never the installed sources, nothing committed):
#   IPV4_L3FWD_LPM_MAX_RULES      1024  -> 2^21 (room for a full view and growth)
#   IPV4_L3FWD_LPM_NUMBER_TBL8S   2^8   -> 2^16 (one per /24 that holds a longer prefix)
#   IPV6_L3FWD_LPM_MAX_RULES      1024  -> 2^19 (the 2023 IPv6 view has 160k prefixes;
#                                 its 38k tbl8 groups fit the stock 2^16)
#   NB_MBUF floor                 8192  -> 65536
#   the per-route "LPM: Adding route" printf is disabled (900k lines of log otherwise)
#   RX offloads are masked by what the device offers (vdevs offer no checksum offload)
# The forwarding code itself is untouched. Rebuilt only when the sources, this script
# or the DPDK version change (a stamp file records them).
set -euo pipefail
cd "$(dirname "$0")/../.."

SRC=/usr/share/dpdk/examples/l3fwd
OUT=""
LINK=static
BURST=32
while [ $# -gt 0 ]; do
  case "$1" in
    --src) SRC="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --shared) LINK=shared; shift ;;
    --burst) BURST="$2"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "build-l3fwd.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

die() { echo "build-l3fwd.sh: $*" >&2; exit 1; }
[[ "$BURST" =~ ^[0-9]+$ ]] && [ "$BURST" -ge 8 ] && [ "$BURST" -le 64 ] \
  || die "--burst wants a number from 8 to 64, got '$BURST'"
if [ -z "$OUT" ]; then
  OUT=target/bench/l3fwd
  [ "$BURST" = 32 ] || OUT="$OUT-b$BURST"
fi
[ -f "$SRC/main.c" ] || die "no l3fwd sources in $SRC (install Debian's dpdk-doc)"
[ -f "$SRC/../common/pkt_group.h" ] || die "no $SRC/../common (dpdk-doc incomplete?)"
pkg-config --exists libdpdk || die "pkg-config cannot find libdpdk (install libdpdk-dev)"
command -v make >/dev/null || die "make not found (install build-essential)"

stamp_of() {
  {
    pkg-config --modversion libdpdk
    echo "burst $BURST"
    cat "$0"
    cat "$SRC"/*.c "$SRC"/*.h "$SRC"/Makefile
  } | sha256sum | cut -d' ' -f1
}
want=$(stamp_of)
BIN="$PWD/$OUT/src/build/l3fwd-$LINK"
if [ -x "$OUT/src/build/l3fwd-shared" ] && [ -x "$OUT/src/build/l3fwd-static" ] &&
   [ "$(cat "$OUT/stamp" 2>/dev/null)" = "$want" ]; then
  echo "$BIN"
  exit 0
fi

rm -rf "$OUT"
mkdir -p "$OUT/src" "$OUT/common"
cp -r "$SRC"/. "$OUT/src/"
# The Makefile includes ../common (pkt_group.h, neon/sse helpers).
cp -r "$SRC/../common"/. "$OUT/common/"
chmod -R u+w "$OUT"

patch_one() { # file, sed expression, what must match afterwards
  local f="$OUT/src/$1"
  sed -i -e "$2" "$f"
  grep -q -- "$3" "$f" || die "patching $1 failed ($3 not found): the l3fwd sources changed"
}
patch_one l3fwd_lpm.c 's/^#define IPV4_L3FWD_LPM_MAX_RULES .*/#define IPV4_L3FWD_LPM_MAX_RULES (1 << 21)/' \
  'IPV4_L3FWD_LPM_MAX_RULES (1 << 21)'
patch_one l3fwd_lpm.c 's/^#define IPV4_L3FWD_LPM_NUMBER_TBL8S .*/#define IPV4_L3FWD_LPM_NUMBER_TBL8S (1 << 16)/' \
  'IPV4_L3FWD_LPM_NUMBER_TBL8S (1 << 16)'
patch_one l3fwd_lpm.c 's/^#define IPV6_L3FWD_LPM_MAX_RULES .*/#define IPV6_L3FWD_LPM_MAX_RULES (1 << 19)/' \
  'IPV6_L3FWD_LPM_MAX_RULES (1 << 19)'
patch_one l3fwd_lpm.c 's/printf("LPM: Adding route %s \/ %d (%d) \[%s\]\\n",/if (0) printf("LPM: Adding route %s \/ %d (%d) [%s]\\n",/' \
  'if (0) printf("LPM: Adding route %s'
[ "$(grep -c 'if (0) printf("LPM: Adding route' "$OUT/src/l3fwd_lpm.c")" = 2 ] \
  || die "patching l3fwd_lpm.c failed (want both the IPv4 and IPv6 route printfs off)"
patch_one main.c 's/(unsigned)8192)/(unsigned)65536)/' '(unsigned)65536)'
if [ "$BURST" != 32 ]; then
  patch_one l3fwd.h "s/^#define MAX_PKT_BURST .*/#define MAX_PKT_BURST     $BURST/" \
    "#define MAX_PKT_BURST     $BURST\$"
fi
# Stock l3fwd asks every port for RX checksum offload, which vdevs lack (configure fails
# with -EINVAL); ask only for what the device offers, as the router and testpmd do.
patch_one main.c 's/^\(\t*\)local_port_conf.rx_adv_conf.rss_conf.rss_hf &=/\1local_port_conf.rxmode.offloads \&= dev_info.rx_offload_capa;\n&/' \
  'local_port_conf.rxmode.offloads &= dev_info.rx_offload_capa;'
patch_one main.c 's/rxq_conf.offloads = port_conf.rxmode.offloads;/rxq_conf.offloads = port_conf.rxmode.offloads \& dev_info.rx_offload_capa;/' \
  'rxq_conf.offloads = port_conf.rxmode.offloads & dev_info.rx_offload_capa;'

echo "build-l3fwd.sh: building patched l3fwd in $OUT/src" >&2
make -C "$OUT/src" -s -j"$(nproc)" shared static >"$OUT/build.log" 2>&1 || {
  tail -20 "$OUT/build.log" >&2
  die "make failed (log: $OUT/build.log)"
}
for b in shared static; do
  [ -x "$OUT/src/build/l3fwd-$b" ] || die "make left no build/l3fwd-$b"
done
echo "$want" >"$OUT/stamp"
echo "$BIN"
