#!/usr/bin/env bash
# Proves scripts/bench/latency.sh works end to end: one quick run (the router with one
# label over two hops, Linux over two hops), then checks that every row has transactions,
# the router accounted for every mbuf, and nothing is left behind; then interrupts a
# second run once its router is up and checks the trap removed its processes and
# namespaces. Never asserts a latency: this box's figures are not a property of the code.
# Takes ~15 s. Needs root; skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(id -u)" != 0 ]; then echo "latency_smoke: SKIP (needs root)"; exit 0; fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=(--quick --out "$out/run" --no-build)
# scripts/test.sh builds the release router before the suites (build it if run alone);
# udp_rr is built here (seconds; a no-op when fresh).
export PATH="$HOME/.cargo/bin:$PATH"
[ -x target/release/mplsrouter ] || cargo build --release --quiet --bin mplsrouter
cargo build --release --quiet -p udp-rr
fail() { echo "latency_smoke: FAIL: $*"; exit 1; }
left_behind() { # processes and namespaces of a run whose out dir is $1
  ps -eo pid=,args= | grep -F "$1" | grep -v grep || true
  ip netns list | grep -E "^lat$2-" || true
}

timeout 120 scripts/bench/latency.sh "${args[@]}" > "$out/run.log" 2>&1 &
pid=$!
wait "$pid" || { cat "$out/run.log"; fail "latency.sh --quick exited $?"; }
python3 - "$out/run" <<'PY' || { cat "$out/run.log"; exit 1; }
import json, sys
bad = []
for row in ("router-l1-n1", "linux-h2-n1"):
    try:
        r = json.load(open("%s/%s.json" % (sys.argv[1], row)))
    except (OSError, ValueError) as e:
        bad.append("%s: %s" % (row, e)); continue
    if not (r["transactions"] > 0 and r["trans_per_s"] > 0 and 0 < r["rtt_us"]["p50"] <= r["rtt_us"]["p99"] <= r["rtt_us"]["p999"]):
        bad.append("%s: %r" % (row, r))
for b in bad:
    print("latency_smoke: FAIL: %s" % b)
sys.exit(1 if bad else 0)
PY
grep -q "mbufs not returned to the pool: 0" "$out/run/router-l1-n1-router.log" \
  || fail "the router did not account for every mbuf"
grep -q "^| 1 | 1 | 2 | [0-9]" "$out/run/table.md" || fail "no table row: $(cat "$out/run/table.md")"
[ -z "$(left_behind "$out/run" "$pid")" ] || fail "left behind: $(left_behind "$out/run" "$pid")"
echo "latency_smoke: quick run measured both rows and cleaned up"

# Interrupted once the router is up: the trap must stop it and delete the namespaces.
scripts/bench/latency.sh --quick --no-build --out "$out/int" > "$out/int.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  grep -qs "tables: generation" "$out/int/router-l1-n1-router.log" && break
  sleep 0.1
done
grep -qs "tables: generation" "$out/int/router-l1-n1-router.log" \
  || { cat "$out/int.log"; fail "the second run's router never came up"; }
kill -TERM "$pid"
wait "$pid" || true
[ -z "$(left_behind "$out/int" "$pid")" ] || fail "left behind after SIGTERM: $(left_behind "$out/int" "$pid")"
echo "latency_smoke: SIGTERM mid-run cleaned up its router and namespaces"
