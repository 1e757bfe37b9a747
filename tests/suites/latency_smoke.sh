#!/usr/bin/env bash
# Proves scripts/bench/latency.sh works end to end: one quick run of both families (the
# router with one label over two hops, Linux over two hops; in IPv6 the router row is
# 6PE), then checks that every row has transactions, the router accounted for every mbuf
# in both, and nothing is left behind; then interrupts a second run (IPv4 only) once its
# router is up and checks the trap removed its processes and namespaces. Never asserts a
# latency: this box's figures are not a property of the code.
# Takes ~20-25 s. Needs root; skipped otherwise.
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
for row in ("router-l1-n1", "linux-h2-n1", "router6-l1-n1", "linux6-h2-n1"):
    try:
        r = json.load(open("%s/%s.json" % (sys.argv[1], row)))
    except (OSError, ValueError) as e:
        bad.append("%s: %s" % (row, e)); continue
    if not (r["transactions"] > 0 and r["trans_per_s"] > 0 and 0 < r["rtt_us"]["p50"] <= r["rtt_us"]["p99"] <= r["rtt_us"]["p999"]):
        bad.append("%s: %r" % (row, r))
# The labelled rows cross the router twice each way (a->b, c->d and back): at least four
# packets received per measured transaction (warm-up and ping add more).
import re
for row in ("router-l1-n1", "router6-l1-n1"):
    try:
        r = json.load(open("%s/%s.json" % (sys.argv[1], row)))
        m = re.search(r"^workers: received (\d+)", open("%s/%s-router.log" % (sys.argv[1], row)).read(), re.M)
    except (OSError, ValueError):
        continue  # reported above
    if not m or int(m.group(1)) < 4 * r["transactions"]:
        bad.append("%s: the router received %s packets for %d transactions" % (row, m and m.group(1), r["transactions"]))
for b in bad:
    print("latency_smoke: FAIL: %s" % b)
sys.exit(1 if bad else 0)
PY
for r in router-l1-n1 router6-l1-n1; do
  grep -q "mbufs not returned to the pool: 0" "$out/run/$r-router.log" \
    || fail "the router did not account for every mbuf ($r)"
done
# The IPv6 router row is 6PE: IPv6 routes pushed with a label.
grep -q "push: \[100\]" "$out/run/router6-l1-n1-routes.yaml" \
  && grep -q '^ipv6:' "$out/run/router6-l1-n1-routes.yaml" || fail "router6-l1-n1 is not a 6PE row"
for f in "IPv4" "IPv6 (6PE)"; do
  grep -qF "| $f | 1 | 1 | 2 | " "$out/run/table.md" || fail "no $f table row: $(cat "$out/run/table.md")"
done
[ -z "$(left_behind "$out/run" "$pid")" ] || fail "left behind: $(left_behind "$out/run" "$pid")"
echo "latency_smoke: quick run measured the IPv4 and IPv6 rows and cleaned up"

# Interrupted once the router is up: the trap must stop it and delete the namespaces.
scripts/bench/latency.sh --quick --no-build --family ipv4 --out "$out/int" > "$out/int.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  grep -qs "tables: generation" "$out/int/router-l1-n1-router.log" && break
  sleep 0.1
done
grep -qs "tables: generation" "$out/int/router-l1-n1-router.log" \
  || { cat "$out/int.log"; fail "the second run's router never came up"; }
# Then mid-measurement: once the client runs, latency.sh waits for it, and a SIGTERM
# interrupts that wait at once. (Sent while bash parses a command substitution, the
# trap fails to parse, a bash bug: exit 2, seen once in CI.)
for _ in $(seq 100); do
  [ -e "$out/int/router-l1-n1-client.log" ] && break
  sleep 0.1
done
[ -e "$out/int/router-l1-n1-client.log" ] || { cat "$out/int.log"; fail "the second run's client never started"; }
sleep 0.3
kill -TERM "$pid"
t0=$(date +%s)
rc=0
wait "$pid" || rc=$?
# It stopped (the trap's status, no table) within a few seconds, not at the run's end.
[ "$rc" = 130 ] || { cat "$out/int.log"; fail "latency.sh exited $rc after SIGTERM (want 130)"; }
[ ! -e "$out/int/table.md" ] || fail "the run went on to its table after SIGTERM"
[ $(($(date +%s) - t0)) -le 10 ] || fail "latency.sh took $(($(date +%s) - t0)) s to stop"
[ -z "$(left_behind "$out/int" "$pid")" ] || fail "left behind after SIGTERM: $(left_behind "$out/int" "$pid")"
echo "latency_smoke: SIGTERM mid-run cleaned up its router and namespaces"
