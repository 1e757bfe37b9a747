#!/usr/bin/env bash
# Soak with route churn: the router at full rate on a pcap source (infinite_rx=1, net_null
# sink) while the routes file is replaced (rename) every 100 ms, cycling table A, table B
# (same prefixes, every next hop moved) and a deliberately broken file. Checks at the end:
#   - the process is alive until its --duration ends, and exits 0;
#   - every good write was applied (fib generation +1, reloads{ok} +1) and every broken one
#     rejected (reloads{error} +1, generation unchanged: the old table keeps serving);
#   - received = forwarded + dropped (all reasons) + slow-path + slow-path-queue-full +
#     tx-refused (no unaccounted loss), from the final summary, and the ports' rx
#     counters equal the workers' received count;
#   - mbufs not returned to the pool: 0;
#   - RSS flat: mean VmRSS over the last minute within RSS_BOUND_PCT (10 %) of the first
#     minute (first/last 20 % of the run when shorter than 5 minutes; the first 10 s are
#     warm-up and not sampled);
#   - mplsrouter_rcu_pending_snapshots back to 0 (no retired table left unfreed).
#
#   scripts/soak.sh [--seconds N (300)] [--prefixes N (100000; 0 = full view)]
#                   [--interval-ms N (100)] [--bin PATH] [--keep]
# Full-view tables compile in about a second each here, so alternating them every 100 ms
# is not possible: the default is the first 100k prefixes of the full view, and each write
# waits (bounded, 10 s) for the previous reload to finish before the next 100 ms tick.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

SECONDS_RUN=300
PREFIXES=100000
INTERVAL_MS=100
BIN=""
KEEP=0
RSS_BOUND_PCT=${RSS_BOUND_PCT:-10}
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --prefixes) PREFIXES="$2"; shift 2 ;;
    --interval-ms) INTERVAL_MS="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$BIN" ]; then
  cargo build --release --bin mplsrouter
  BIN=target/release/mplsrouter
fi
BIN=$(realpath "$BIN")
FULLVIEW=$(realpath ../shared/data/ipv4-fullview-2023.txt.gz 2>/dev/null || echo /work/shared/data/ipv4-fullview-2023.txt.gz)

W=$(mktemp -d /tmp/mplsrouter-soak.XXXXXX)
PID=""
cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill "$PID" 2>/dev/null || true; fi
  if [ "$KEEP" = 0 ]; then rm -rf "$W"; else echo "soak: kept $W"; fi
}
trap cleanup EXIT
fail() { echo "soak: FAIL: $*" >&2; exit 1; }

# Tables: A from the prefix list, B = A with every next hop moved by one neighbor.
if [ "$PREFIXES" = 0 ]; then
  cp "$FULLVIEW" "$W/prefixes.txt.gz"
else
  zcat "$FULLVIEW" | awk -v n="$PREFIXES" 'NR <= n' | gzip -1 > "$W/prefixes.txt.gz"
fi
"$BIN" gen-traffic ipv4-full --prefixes "$W/prefixes.txt.gz" --count 4096 \
  --out "$W/in.pcap" --routes "$W/a.yaml" > /dev/null
awk '/^  - via: 10\.0\.1\./ { split($3, o, "."); n = o[4] + 1; if (n > 201) n = 2;
       print "  - via: 10.0.1." n; next } { print }' "$W/a.yaml" > "$W/b.yaml"
cmp -s "$W/a.yaml" "$W/b.yaml" && fail "table B is identical to table A"
printf 'neighbors:\n  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"\nipv4: [\n' > "$W/bad.yaml"
cp "$W/a.yaml" "$W/routes.yaml"

cat > "$W/startup.yaml" <<CFG
eal: {lcores: "0,1", no_huge: true, memory_mb: 512, file_prefix: mplsr-soak-$$}
ports:
  - {name: in, vdev: "net_pcap_soak$$,rx_pcap=$W/in.pcap,infinite_rx=1", mac: "02:00:00:00:00:01", addresses: [10.0.0.1/24]}
  - {name: out, vdev: "net_null_soak$$,no-rx=1", mac: "02:00:00:00:01:01", addresses: [10.0.1.1/24]}
routes: routes.yaml
metrics_listen: 127.0.0.1:0
CFG

# The router outlives the churn by a few seconds so the final checks can scrape it.
DURATION=$((SECONDS_RUN + 8))
"$BIN" run --config "$W/startup.yaml" --duration "$DURATION" --stats-interval 10 \
  > "$W/stdout" 2> "$W/stderr" &
PID=$!
ADDR=""
for _ in $(seq 1 600); do
  ADDR=$(sed -n 's|^metrics: http://\(.*\)/metrics.*|\1|p' "$W/stdout" | head -1)
  [ -n "$ADDR" ] && break
  kill -0 "$PID" 2>/dev/null || { cat "$W/stderr" >&2; fail "router did not start"; }
  sleep 0.1
done
[ -n "$ADDR" ] || fail "no metrics address on stdout"
scrape() { curl -sf --max-time 5 "http://$ADDR/metrics"; }
val() { # val NAME [LABELS] : the value of one sample
  scrape | awk -v n="$1" -v l="${2:-}" '$1 == n l { print $2; found = 1 } END { if (!found) print "NA" }'
}
echo "soak: pid $PID, metrics $ADDR, $SECONDS_RUN s, $(grep -c / "$W/a.yaml" || true) lines per table, write every $INTERVAL_MS ms"

rss_log="$W/rss"
( while kill -0 "$PID" 2>/dev/null; do
    echo "$(date +%s) $(awk '/VmRSS/ {print $2}' /proc/$PID/status 2>/dev/null)"; sleep 1
  done ) > "$rss_log" &
RSS_PID=$!

start=$(date +%s)
gen=$(val mplsrouter_fib_generation)
ok=$(val mplsrouter_reloads_total '{result="ok"}')
err=$(val mplsrouter_reloads_total '{result="error"}')
good_writes=0; bad_writes=0; slow_ticks=0; i=0
while [ $(( $(date +%s) - start )) -lt "$SECONDS_RUN" ]; do
  t0=$(date +%s%N)
  case $((i % 3)) in 0) src=b.yaml ;; 1) src=bad.yaml ;; 2) src=a.yaml ;; esac
  cp "$W/$src" "$W/routes.tmp" && mv "$W/routes.tmp" "$W/routes.yaml"
  if [ "$src" = bad.yaml ]; then err=$((err + 1)); bad_writes=$((bad_writes + 1))
  else ok=$((ok + 1)); gen=$((gen + 1)); good_writes=$((good_writes + 1)); fi
  # Wait for this write to be handled (bounded), then check its outcome.
  for _ in $(seq 1 1000); do
    m=$(scrape) || fail "metrics scrape failed (router dead?)"
    g=$(awk '$1 == "mplsrouter_fib_generation" { print $2 }' <<< "$m")
    o=$(awk '$1 == "mplsrouter_reloads_total{result=\"ok\"}" { print $2 }' <<< "$m")
    e=$(awk '$1 == "mplsrouter_reloads_total{result=\"error\"}" { print $2 }' <<< "$m")
    [ "$o" -ge "$ok" ] && [ "$e" -ge "$err" ] && break
    sleep 0.01
  done
  [ "$o" = "$ok" ] && [ "$e" = "$err" ] && [ "$g" = "$gen" ] ||
    fail "write $i ($src): want ok=$ok error=$err generation=$gen, have ok=$o error=$e generation=$g"
  i=$((i + 1))
  left=$(( INTERVAL_MS - ($(date +%s%N) - t0) / 1000000 ))
  if [ "$left" -gt 0 ]; then sleep "0.$(printf '%03d' "$left")"; else slow_ticks=$((slow_ticks + 1)); fi
done
kill -0 "$PID" 2>/dev/null || fail "router died during the churn"
grep -q "reload rejected, still serving generation" "$W/stderr" || fail "no rejection message on stderr"
sleep 1
pending=$(val mplsrouter_rcu_pending_snapshots)
[ "$pending" = 0 ] || [ "$pending" = NA ] || fail "retired tables not freed: $pending"
[ "$pending" = NA ] && echo "soak: WARNING: mplsrouter_rcu_pending_snapshots not exported by this binary"

wait "$PID" || fail "router exited with status $? ($(tail -3 "$W/stderr"))"
PID=""
wait "$RSS_PID" 2>/dev/null || true
summary=$(grep -E '^ *workers:' "$W/stdout" | tail -1)
[ -n "$summary" ] || fail "no summary line"
get() { sed -n "s/.*[ :]$1 \([0-9]*\).*/\1/p" <<< "$summary" | head -1; }
rx=$(get received); fwd=$(get forwarded); txr=$(get tx-refused); drp=$(get dropped)
sp=$(get slow-path); spq=$(get slow-path-queue-full)
by_reason=$({ grep -o '[a-z_]*=[0-9]*' <<< "$summary" || true; } | awk -F= '{ s += $2 } END { print s + 0 }')
[ "$by_reason" = "$drp" ] || fail "dropped $drp != sum by reason $by_reason ($summary)"
acc=$((fwd + txr + drp + sp + spq))
[ "$rx" -gt 0 ] || fail "no packets received"
[ "$rx" = "$acc" ] || fail "received $rx != forwarded $fwd + tx-refused $txr + dropped $drp + slow-path $sp + queue-full $spq = $acc"
port_rx=$(sed -n 's/^port [^:]*: rx \([0-9]*\) pkts.*/\1/p' "$W/stdout" | awk '{ s += $1 } END { print s + 0 }')
[ "$port_rx" = "$rx" ] || fail "ports received $port_rx packets, workers $rx"
leak=$(sed -n 's/.*mbufs not returned to the pool: \([0-9]*\).*/\1/p' "$W/stdout")
[ "$leak" = 0 ] || fail "mbufs not returned to the pool: ${leak:-no line}"

# RSS: first vs last window, skipping 10 s of warm-up.
read -r rss_first rss_last < <(awk -v s="$start" -v d="$SECONDS_RUN" 'BEGIN { n = 0 }
  $2 != "" && $1 >= s + 10 && $1 <= s + d { t[n] = $1; r[n] = $2; n++ }
  END {
    w = (d >= 300) ? 60 : int((d - 10) / 5); if (w < 2) w = 2
    for (k = 0; k < n; k++) {
      if (t[k] < t[0] + w) { a += r[k]; na++ }
      if (t[k] > t[n-1] - w) { b += r[k]; nb++ }
    }
    if (na == 0 || nb == 0) { print "0 0"; exit }
    printf "%d %d\n", a / na, b / nb
  }' "$rss_log")
[ "$rss_first" -gt 0 ] || fail "no RSS samples after warm-up (run at least 15 s)"
growth=$(( (rss_last - rss_first) * 100 / rss_first ))
echo "soak: writes good=$good_writes bad=$bad_writes (ticks over ${INTERVAL_MS} ms: $slow_ticks)"
echo "soak: reloads ok=$ok error=$err, final generation $gen"
echo "soak: received $rx = forwarded $fwd + tx-refused $txr + dropped $drp + slow-path $sp + queue-full $spq"
echo "soak: RSS first window ${rss_first} kB, last window ${rss_last} kB (growth ${growth} %, bound ${RSS_BOUND_PCT} %)"
echo "soak: rcu pending snapshots at the end: $pending; mbufs not returned: $leak"
[ "$growth" -lt "$RSS_BOUND_PCT" ] || fail "RSS grew ${growth} % (bound ${RSS_BOUND_PCT} %)"
echo "soak: PASS"
