#!/usr/bin/env bash
# testpmd-style performance runs: the router beside dpdk-testpmd (io forwarding, the
# ceiling of the source and sink) and DPDK's l3fwd (LPM), on the same pcap source
# (net_pcap, infinite_rx) and null sink, no NIC needed. Method: docs/benchmarks.md.
#
#   scripts/bench.sh [options]
#     --scenario NAME   mpls-swap mpls-php ler-push2 ipv4-small ipv4-full ecmp-4
#                       ipv6-small ipv6-full 6pe-push (`ipv6` for these three)
#                       (repeatable; default: all nine), or the slow-path pressure
#                       mixes, router only, each beside punt-noroute: punt-noroute
#                       punt-glean punt-ttl1 punt-echo punt-arp, `punt` for all five
#     --runs N          runs per tool, alternated A B C A B C... (default 3); median, min-max
#     --quick           1 run, 1 s warm-up, 2 s measured (CI smoke); else 2 s + 5 s
#     --warmup S --measure S   override the interval
#     --count N         frames in each pcap (default 4096; see the docs before raising it)
#     --size BYTES      frame size incl. FCS (default 64)
#     --burst N         packets per RX/TX burst for every tool, 8 to 64 (default 32):
#                       the router's burst_size, testpmd's --burst, and l3fwd built
#                       with MAX_PKT_BURST N (its own copy, target/bench/l3fwd-bN)
#     --workers N       router workers / testpmd cores / l3fwd lcores (default 1); needs
#                       N+1 cores; the source gets N queues (one rx_pcap each)
#     --share-cpus      with more lcores than CPUs, place worker lcores on CPUs 1..
#                       round robin (EAL --lcores L@C): proves the multi-worker setup
#                       on a small machine; its figures say nothing about speed
#     --lcores SPEC     place lcore 0 (main) and the N workers yourself, EAL L@C form,
#                       e.g. 0@0,1@0,2@1 (a worker beside the control thread); l3fwd
#                       gets the workers' part
#     --huge | --no-huge   hugepages (default: used when some are free)
#     --prefixes FILE   full view for ipv4-full (default ../shared/data/ipv4-fullview-2023.txt.gz)
#     --prefixes6 FILE  full view for ipv6-full (default ../shared/data/ipv6-fullview-2023.txt.gz)
#     --json FILE       also write the results as JSON
#     --compare LABEL=BINARY   another router binary (e.g. a build of an older commit)
#                       measured in the same runs, right beside the router: rows
#                       SCENARIO@LABEL share the source, testpmd and l3fwd figures, and
#                       the routers' order rotates run by run (repeatable; forwarding
#                       scenarios only). Before/after in one sitting, l3fwd loaded once
#     --no-build        use the binaries already built
#     --no-l3fwd        skip building and running l3fwd
#     --l3fwd-shared    run l3fwd built on DPDK's shared libraries (the example's default;
#                       sessions 1-10 measured that one) instead of its static build,
#                       which links DPDK as the router's release build does
#     --workdir DIR     pcaps, configs, logs (default target/bench/run)
#     --fail-fast       stop at the first failed measurement
#     --startup-timeout S          wait for traffic from a tool (default 180)
#     --l3fwd-startup-timeout S    the same for l3fwd, which loads a full view in
#                                  minutes (rte_lpm_add is linear per rule; default 1800)
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
export PATH="$HOME/.cargo/bin:$PATH"
export PYTHONDONTWRITEBYTECODE=1

ARGS=()
BUILD=1
L3FWD=1
L3FWD_LINK=()
HUGE=auto
QUICK=0
WORKDIR=target/bench/run
PREFIXES="$REPO/../shared/data/ipv4-fullview-2023.txt.gz"
PREFIXES6="$REPO/../shared/data/ipv6-fullview-2023.txt.gz"
WARMUP=""
MEASURE=""
RUNS=""
BURST=32
need() { [ $# -ge 2 ] || { echo "bench.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --scenario|--count|--size|--workers|--json|--startup-timeout|--l3fwd-startup-timeout|--lcores|--compare)
      need "$@"; ARGS+=("$1" "$2"); shift 2 ;;
    --runs) need "$@"; RUNS="$2"; shift 2 ;;
    --burst) need "$@"; BURST="$2"; shift 2 ;;
    --warmup) need "$@"; WARMUP="$2"; shift 2 ;;
    --measure) need "$@"; MEASURE="$2"; shift 2 ;;
    --prefixes) need "$@"; PREFIXES="$2"; shift 2 ;;
    --prefixes6) need "$@"; PREFIXES6="$2"; shift 2 ;;
    --workdir) need "$@"; WORKDIR="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --huge) HUGE=1; shift ;;
    --no-huge) HUGE=0; shift ;;
    --no-build) BUILD=0; shift ;;
    --no-l3fwd) L3FWD=0; shift ;;
    --l3fwd-shared) L3FWD_LINK=(--shared); shift ;;
    --fail-fast|--share-cpus) ARGS+=("$1"); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$QUICK" = 1 ]; then
  : "${RUNS:=1}" "${WARMUP:=1}" "${MEASURE:=2}"
fi
[ -n "$RUNS" ] && ARGS+=(--runs "$RUNS")
[ -n "$WARMUP" ] && ARGS+=(--warmup "$WARMUP")
[ -n "$MEASURE" ] && ARGS+=(--measure "$MEASURE")

die() { echo "bench.sh: $*" >&2; exit 1; }
[[ "$BURST" =~ ^[0-9]+$ ]] && [ "$BURST" -ge 8 ] && [ "$BURST" -le 64 ] \
  || die "--burst wants a number from 8 to 64, got '$BURST'"
ARGS+=(--burst "$BURST")
share=0
lcores=0
for a in "${ARGS[@]}"; do [ "$a" = --share-cpus ] && share=1; [ "$a" = --lcores ] && lcores=1; done
for ((i = 0; i < ${#ARGS[@]}; i++)); do
  if [ "${ARGS[$i]}" = --workers ]; then
    w="${ARGS[$((i + 1))]}"
    [[ "$w" =~ ^[1-9][0-9]*$ ]] || die "--workers wants a positive number, got '$w'"
    [ "$w" -lt "$(nproc)" ] || [ "$share" = 1 ] || [ "$lcores" = 1 ] \
      || die "--workers $w needs $((w + 1)) CPUs (lcores 0-$w); this machine has $(nproc) (--share-cpus to place them anyway, for a functional check)"
  fi
done
command -v python3 >/dev/null || die "python3 not found"
TESTPMD=$(command -v dpdk-testpmd) || die "dpdk-testpmd not found (Debian package dpdk-dev)"

free_huge=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
if [ "$HUGE" = auto ]; then
  if [ "${free_huge:-0}" -gt 0 ] && grep -q hugetlbfs /proc/mounts; then HUGE=1; else HUGE=0; fi
elif [ "$HUGE" = 1 ] && { [ "${free_huge:-0}" -eq 0 ] || ! grep -q hugetlbfs /proc/mounts; }; then
  die "--huge: no free hugepages or no hugetlbfs mount (scripts/setup-hugepages.sh reserves them)"
fi
[ "$HUGE" = 1 ] && ARGS+=(--huge)

if [ "$BUILD" = 1 ]; then
  echo "bench.sh: cargo build --release --bin mplsrouter" >&2
  cargo build --release --quiet --bin mplsrouter
fi
ROUTER="$REPO/target/release/mplsrouter"
[ -x "$ROUTER" ] || die "$ROUTER not built (drop --no-build)"
if [ "$L3FWD" = 1 ]; then
  L3FWD_BIN=$(scripts/bench/build-l3fwd.sh --burst "$BURST" "${L3FWD_LINK[@]}") || die "l3fwd build failed (or use --no-l3fwd)"
  ARGS+=(--l3fwd "$L3FWD_BIN")
fi

mkdir -p "$WORKDIR"
exec python3 scripts/bench/bench.py --router "$ROUTER" --testpmd "$TESTPMD" \
  --repo "$REPO" --workdir "$WORKDIR" --prefixes "$PREFIXES" --prefixes6 "$PREFIXES6" "${ARGS[@]}"
