#!/usr/bin/env bash
# Soak with route churn: the router at full rate on a pcap source (infinite_rx=1, net_null
# sink) while the routes file is replaced (rename) every 100 ms, cycling table B, a
# deliberately broken file, table A. A and B are both the full view (901,899 prefixes by
# default) and differ as BGP churn does: about CHURN routes (every STEP-th line), two in
# three moved to another next hop and one in three withdrawn (announced again on the way
# back to A). The change stays under the reload's derive limit (4096 prefixes), so every
# good write is applied by diff + derive, not a full compile; the reload diffs the file
# into every changed run of lines (crates/config/src/reload/diff.rs), so only the ~3000
# changed lines are parsed, not the span from the first to the last. Measurements:
# docs/measurements.md ("Soak"). Speed is reported, never asserted. Checks at the end:
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
# Each write waits (bounded, 10 s) for the previous one to be handled before the next
# tick; "ticks over N ms" counts writes that took longer than the interval, and the
# write-to-applied latency (median / max) says what interval the router sustains.
#
#   scripts/soak.sh [--seconds N (300)] [--prefixes N (0 = full view)] [--churn N (3000)]
#                   [--churn-block] [--interval-ms N (100)] [--bin PATH] [--keep]
#                   [--tables-only DIR]
# --churn-block puts the changed routes on consecutive lines (an operator's edit of one
# region) instead of spreading them over the table (BGP-like): the reload's diff then
# finds one changed run instead of ~3000.
# --tables-only DIR writes a.yaml, b.yaml, bad.yaml, in.pcap into DIR and exits (for
# `cargo run -p config --release --example churn_reload`).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

SECONDS_RUN=300
PREFIXES=0
CHURN=3000
CHURN_BLOCK=0
TABLES_ONLY=""
INTERVAL_MS=100
BIN=""
KEEP=0
RSS_BOUND_PCT=${RSS_BOUND_PCT:-10}
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --prefixes) PREFIXES="$2"; shift 2 ;;
    --churn) CHURN="$2"; shift 2 ;;
    --churn-block) CHURN_BLOCK=1; shift ;;
    --interval-ms) INTERVAL_MS="$2"; shift 2 ;;
    --tables-only) TABLES_ONLY="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/!p}' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$BIN" ]; then
  cargo build --release --bin mplsrouter
  BIN=target/release/mplsrouter
fi
BIN=$(realpath "$BIN")
FULLVIEW=$(realpath ../shared/data/ipv4-fullview-2023.txt.gz 2>/dev/null || echo /work/shared/data/ipv4-fullview-2023.txt.gz)

if [ -n "$TABLES_ONLY" ]; then
  mkdir -p "$TABLES_ONLY"; W=$(realpath "$TABLES_ONLY"); KEEP=1
else
  W=$(mktemp -d /tmp/mplsrouter-soak.XXXXXX)
fi
PID=""
cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill "$PID" 2>/dev/null || true; fi
  if [ "$KEEP" = 0 ]; then rm -rf "$W"; else echo "soak: kept $W"; fi
}
trap cleanup EXIT
fail() { echo "soak: FAIL: $*" >&2; exit 1; }

# Tables: A = the prefix list as routes_compact lines (one route a line, next hops
# spread by gen-traffic's hash so its traffic is forwarded), B = A with the churn.
if [ "$PREFIXES" = 0 ]; then
  cp "$FULLVIEW" "$W/prefixes.txt.gz"
else
  zcat "$FULLVIEW" | awk -v n="$PREFIXES" 'NR <= n' | gzip -1 > "$W/prefixes.txt.gz"
fi
"$BIN" gen-traffic ipv4-full --prefixes "$W/prefixes.txt.gz" --count 4096 \
  --out "$W/in.pcap" --routes "$W/groups.yaml" > /dev/null
awk '/^prefix_groups:/ { print "routes_compact:"; pg = 1; next }
     !pg { print; next }
     /^  - via: / { via = $3; next }
     /^      [0-9]/ { print "  - " $1 " via " via }' "$W/groups.yaml" > "$W/a.yaml"
rm "$W/groups.yaml"
routes=$(grep -c '^  - [0-9]' "$W/a.yaml" || true)
[ "$routes" -gt 0 ] || fail "no routes in table A"
neighbors=$(grep -c '^  - {ip: 10\.0\.1\.' "$W/a.yaml" || true)
STEP=$(( routes / CHURN )); [ "$STEP" -ge 1 ] || STEP=1
# --churn-block: the same number of changes on consecutive lines (mid-table) instead.
FROM=0; [ "$CHURN_BLOCK" = 1 ] && FROM=$(( (routes - CHURN) / 2 )) && STEP=0
awk -v step="$STEP" -v from="$FROM" -v churn="$CHURN" -v last=$((neighbors + 1)) -v stats="$W/churn" '
  /^routes_compact:/ { rc = 1; print; next }
  rc && /^  - [0-9]/ {
    k++
    j = step ? (k % step == 0 ? k / step : 0) : (k > from && k <= from + churn ? k : 0)
    if (j) {
      if (j % 3 == 2) { gone++; next }
      split($4, o, "."); n = o[4] + 1; if (n > last) n = 2
      print "  - " $2 " via 10.0.1." n; moved++; next
    }
  }
  { print }
  END { print moved + 0, gone + 0 > stats }' "$W/a.yaml" > "$W/b.yaml"
read -r MOVED GONE < "$W/churn"
cmp -s "$W/a.yaml" "$W/b.yaml" && fail "table B is identical to table A"
printf 'neighbors:\n  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"\nipv4: [\n' > "$W/bad.yaml"
if [ -n "$TABLES_ONLY" ]; then
  echo "soak: tables in $W: $routes routes; B moves $MOVED next hops, withdraws $GONE"
  exit 0
fi
ln -f "$W/a.yaml" "$W/routes.yaml"

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
echo "soak: pid $PID, metrics $ADDR, $SECONDS_RUN s, $routes routes per table ($MOVED moved, $GONE withdrawn in B), write every $INTERVAL_MS ms"

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
  # A hard link renamed over the routes file: a new inode each write, as an editor's
  # save by rename, without copying 28 MB on the router's core every 100 ms.
  ln -f "$W/$src" "$W/routes.tmp" && mv -f "$W/routes.tmp" "$W/routes.yaml"
  if [ "$src" = bad.yaml ]; then err=$((err + 1)); bad_writes=$((bad_writes + 1))
  else ok=$((ok + 1)); gen=$((gen + 1)); good_writes=$((good_writes + 1)); fi
  # Wait for this write to be handled (bounded), then check its outcome.
  for _ in $(seq 1 1000); do
    m=$(scrape) || fail "metrics scrape failed (router dead?)"
    read -r g o e < <(awk '$1 == "mplsrouter_fib_generation" { g = $2 }
      $1 == "mplsrouter_reloads_total{result=\"ok\"}" { o = $2 }
      $1 == "mplsrouter_reloads_total{result=\"error\"}" { e = $2 }
      END { print g, o, e }' <<< "$m")
    [ "$o" -ge "$ok" ] && [ "$e" -ge "$err" ] && break
    sleep 0.005
  done
  [ "$o" = "$ok" ] && [ "$e" = "$err" ] && [ "$g" = "$gen" ] ||
    fail "write $i ($src): want ok=$ok error=$err generation=$gen, have ok=$o error=$e generation=$g"
  echo "$src $(( ($(date +%s%N) - t0) / 1000000 ))" >> "$W/latency"
  i=$((i + 1))
  left=$(( INTERVAL_MS - ($(date +%s%N) - t0) / 1000000 ))
  if [ "$left" -gt 0 ]; then sleep "$((left / 1000)).$(printf '%03d' $((left % 1000)))"; else slow_ticks=$((slow_ticks + 1)); fi
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
lat() { # lat good|bad : median and max write-to-handled time, ms
  awk -v k="$1" '($1 == "bad.yaml") == (k == "bad") { print $2 }' "$W/latency" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR) printf "median %d ms, max %d ms", v[int((NR + 1) / 2)], v[NR] }'
}
live=$(sed -n 's/^reload: generation [0-9]* live in \([0-9.]*\) ms.*/\1/p' "$W/stdout" | sort -n |
  awk '{ v[NR] = $1 } END { if (NR) printf "median %.1f ms, max %.1f ms over %d", v[int((NR + 1) / 2)], v[NR], NR }')
echo "soak: $routes routes per table, B moves $MOVED next hops and withdraws $GONE"
echo "soak: writes good=$good_writes bad=$bad_writes (ticks over ${INTERVAL_MS} ms: $slow_ticks)"
echo "soak: write to handled: good $(lat good); bad $(lat bad)"
echo "soak: router's reload time (read to published): $live"
echo "soak: reloads ok=$ok error=$err, final generation $gen"
echo "soak: received $rx = forwarded $fwd + tx-refused $txr + dropped $drp + slow-path $sp + queue-full $spq"
echo "soak: dropped by reason: $({ grep -o '[a-z_]*=[0-9]*' <<< "$summary" || true; } | tr '\n' ' ')"
echo "soak: RSS first window ${rss_first} kB, last window ${rss_last} kB (growth ${growth} %, bound ${RSS_BOUND_PCT} %)"
echo "soak: rcu pending snapshots at the end: $pending; mbufs not returned: $leak"
[ "$growth" -lt "$RSS_BOUND_PCT" ] || fail "RSS grew ${growth} % (bound ${RSS_BOUND_PCT} %)"
echo "soak: PASS"
