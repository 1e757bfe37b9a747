#!/bin/bash
# The bundle's run script (scripts/bench/bundle.sh copies it to DIR/run.sh): multi-core
# scaling runs of scripts/bench/bench.py, then long fuzz runs.
# Everything comes from the bundle's directory (binaries, DPDK libs, PMDs, data); run it
# as root from the repository root. Output under $OUT.
set -u
OUT=${OUT:-/tmp/bundle-out}; mkdir -p "$OUT"
R=$PWD
B=$(cd "$(dirname "$0")" && pwd)
D=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0
# Where DPDK is installed its plugin dir is left alone; elsewhere the bundle's PMDs go there.
if [ ! -e $D/librte_net_pcap.so ]; then
  mkdir -p $D && cp $B/pmds/* $D/ && for f in $D/*.so.23; do ln -sf $(basename $f) ${f%.23}; done
fi
export LD_LIBRARY_PATH=$B/lib:$D
export PYTHONUNBUFFERED=1
{
  echo "== host"; nproc; grep -m1 "model name" /proc/cpuinfo; free -g | head -2; uname -a
  $B/bin/mplsrouter --version
} > $OUT/bench.log 2>&1
bench() { # name, timeout, args...
  local name=$1 t=$2; shift 2
  echo "== $name $(date +%T)" >> $OUT/bench.log
  timeout -k 5 $t python3 scripts/bench/bench.py --router $B/bin/mplsrouter \
    --testpmd $B/bin/dpdk-testpmd --repo . --workdir /tmp/bw-$name \
    --prefixes $B/data/ipv4-fullview-2023.txt.gz \
    --prefixes6 $B/data/ipv6-fullview-2023.txt.gz --runs 1 --warmup 1 --measure 2 \
    --startup-timeout 60 --json $OUT/$name.json "$@" >> $OUT/bench.log 2>&1
  echo "== $name rc=$? $(date +%T)" >> $OUT/bench.log
}
bench w1 80 --workers 1 --l3fwd $B/bin/l3fwd --scenario mpls-swap --scenario ipv4-small
# Stop early if the first run could not measure anything (saves device time).
if grep -q '"router_mpps": [0-9]' $OUT/w1.json 2>/dev/null; then
  for n in 2 4 8; do
    bench w$n 80 --workers $n --l3fwd $B/bin/l3fwd --scenario mpls-swap --scenario ipv4-small
  done
  bench full 100 --workers 1 --scenario ipv4-full
  bench ipv6 300 --workers 1 --l3fwd $B/bin/l3fwd --scenario ipv6
fi
pkill -9 -f mplsrouter; pkill -9 -f dpdk-testpmd; pkill -9 -f l3fwd
# Fuzzing on all cores but one; executions summed over the workers' logs.
{
  for t in pipeline pipeline6 config wire wire6; do
    [ -x $B/fuzz/$t ] || continue
    mkdir -p /tmp/fz-$t/corpus && cd /tmp/fz-$t
    max_len=4096; [ $t = config ] && max_len=65536
    secs=${FUZZ_SECS:-100}; jobs=$(( $(nproc) > 1 ? $(nproc) - 1 : 1 ))
    timeout -k 5 $((secs + 25)) $B/fuzz/$t -max_total_time=$secs -jobs=$jobs -workers=$jobs \
      -rss_limit_mb=2048 -max_len=$max_len -timeout=10 -print_final_stats=1 \
      corpus $B/fuzz/seeds-$t > main.log 2>&1
    echo "fuzz $t rc=$?"
    echo "fuzz $t executions: $(grep -h 'stat::number_of_executed_units' fuzz-*.log | awk '{s+=$2} END {print s+0}') workers: $(ls fuzz-*.log | wc -l)"
    grep -h "SUMMARY\|panicked\|ERROR" fuzz-*.log | sort | uniq -c | head
    ls crash-* oom-* timeout-* 2>/dev/null | head
    for c in $(ls crash-* 2>/dev/null | head -2); do echo "$c:"; base64 -w0 $c; echo; done
    cd $R
  done
} > $OUT/fuzz.log 2>&1
