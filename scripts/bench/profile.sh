#!/usr/bin/env bash
# Where a forwarding worker spends its time: runs the router on a scenario's bench config
# (made by a previous `scripts/bench.sh` run, under target/bench/run), samples the worker
# thread with `perf record -e cpu-clock` (the event that works in VMs too) for a few
# seconds after warm-up, and prints the share of samples per shared object and per
# symbol (the pcap/null PMDs are the source and sink; the rest is the router), plus the
# router's own summary line (busy and forwarding-stage cycles per packet).
#
#   scripts/bench/profile.sh SCENARIO [SECONDS (6)]      e.g. scripts/bench/profile.sh mpls-swap
#
# Needs `perf` (Debian's linux-perf; scripts/install-deps.sh installs it) and root.
set -euo pipefail
cd "$(dirname "$0")/../.."

SCENARIO=${1:?usage: scripts/bench/profile.sh SCENARIO [SECONDS]}
SECS=${2:-6}
CFG=target/bench/run/$SCENARIO-router.yaml
BIN=${BIN:-target/release/mplsrouter}
[ -f "$CFG" ] || { echo "profile: $CFG missing: run scripts/bench.sh --quick --scenario $SCENARIO first" >&2; exit 2; }
command -v perf > /dev/null || { echo "profile: perf not found (apt-get install linux-perf)" >&2; exit 2; }

work=$(mktemp -d)
trap 'kill "$pid" 2> /dev/null || true; wait 2> /dev/null || true; rm -rf "$work"' EXIT
sed "s/file_prefix: \"[^\"]*\"/file_prefix: \"profile$$\"/" "$CFG" > "$work/router.yaml"
"$BIN" run --config "$work/router.yaml" --duration $((SECS + 8)) > "$work/router.log" 2>&1 &
pid=$!
# Warm-up: the table is loaded and traffic flows before sampling starts.
sleep 5
tid=""
for t in /proc/$pid/task/*; do
  if grep -q '^rte-worker' "$t/comm" 2> /dev/null; then tid=${t##*/}; break; fi
done
[ -n "$tid" ] || { echo "profile: no worker thread found; router log:" >&2; cat "$work/router.log" >&2; exit 1; }
perf record -q -e cpu-clock -t "$tid" -o "$work/perf.data" -- sleep "$SECS" > /dev/null 2>&1
wait "$pid" || true
echo "== $SCENARIO: samples per shared object"
perf report -i "$work/perf.data" --no-children --sort dso --stdio 2> /dev/null | grep -E '^ +[0-9]' | head -8
echo "== $SCENARIO: top symbols"
perf report -i "$work/perf.data" --no-children --sort dso,symbol --stdio 2> /dev/null | grep -E '^ +[0-9]' | head -12
echo "== router summary"
grep 'workers:' "$work/router.log" || true
