#!/usr/bin/env bash
# Proves the bench harness works: the helpers' unit tests, then one quick run of every
# tool on ipv4-small and ipv6-small (router, testpmd io, l3fwd with IPv4 or IPv6 rules,
# the source alone), then checks that the JSON has every figure, each a positive number,
# and the host info; then ipv4-small with two workers. Never asserts a speed: this box's figures are not a property of the code.
# Takes ~85 s once l3fwd is built (a first build adds ~20-60 s); then the punt mixes.
set -euo pipefail
cd "$(dirname "$0")/../.."

export PYTHONDONTWRITEBYTECODE=1
python3 -m unittest discover -s scripts/bench -p 'test_*.py'

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=(--quick --scenario ipv4-small --scenario ipv6-small --json "$out/bench.json" --workdir "$out/run"
  --startup-timeout 60 --l3fwd-startup-timeout 60)
# scripts/test.sh builds the release binary before the suites; build it if run alone.
[ -x target/release/mplsrouter ] && args+=(--no-build)

start=$(date +%s)
# A hang guard, not a speed limit: a quick run takes ~25 s a scenario plus the first
# l3fwd build.
timeout 300 scripts/bench.sh "${args[@]}"
echo "bench_smoke: harness took $(( $(date +%s) - start ))s"

python3 - "$out/bench.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
failures = []
def check(cond, what):
    if not cond:
        failures.append(what)

host = doc.get("host", {})
for k in ("cpu_model", "cpus_online", "dpdk_version", "hugepages", "git_rev"):
    check(k in host, "host.%s missing" % k)
check(bool(host.get("dpdk_version")), "host.dpdk_version empty")
scen = {s["name"]: s for s in doc.get("scenarios", [])}
check(list(scen) == ["ipv4-small", "ipv6-small"], "scenarios: %s" % list(scen))
for name, s in scen.items():
    check(s.get("runs") == 1, "%s runs: %r" % (name, s.get("runs")))
    for fig in ("router_mpps", "testpmd_io_mpps", "l3fwd_mpps", "source_rx_mpps",
                "router_cycles_per_packet", "router_forwarding_cycles_per_packet",
                "router_forwarding_p10_cycles_per_packet"):
        for key in (fig, fig + "_min", fig + "_max"):
            v = s.get(key)
            check(isinstance(v, (int, float)) and v > 0,
                  "%s.%s = %r, want a positive number" % (name, key, v))
        check(s.get(fig + "_min", 0) <= s.get(fig, 0) <= s.get(fig + "_max", 0),
              "%s.%s outside its min-max" % (name, fig))
for f in failures:
    print("bench_smoke: FAIL: %s" % f)
if failures:
    sys.exit(1)
print("bench_smoke: every figure present and positive")
PY
# l3fwd ran ipv6-small on its 17 IPv6 routes (not its demo table), and the router's
# counters saw IPv6 forwarded, not dropped as an unknown ethertype.
[ "$(grep -c '^R2001:db8:' "$out/run/ipv6-small.rules6")" = 17 ] \
  || { echo "bench_smoke: FAIL: ipv6-small.rules6 does not hold the scenario's 17 routes"; exit 1; }
if grep -q 'unsupported_ethertype=' "$out/run/logs/ipv6-small-router-r1.log"; then
  echo "bench_smoke: FAIL: the router dropped ipv6-small frames as unsupported_ethertype"; exit 1
fi

# --workers 2: the multi-worker setup (two source queues, two router workers each on its
# own queue, testpmd and l3fwd on two lcores). On a machine with fewer than 3 CPUs the
# lcores share CPUs (--share-cpus), which proves the setup, not its speed.
args=(--quick --workers 2 --share-cpus --scenario ipv4-small --json "$out/bench2.json"
  --workdir "$out/run2" --startup-timeout 60 --l3fwd-startup-timeout 60 --no-build)
start=$(date +%s)
timeout 300 scripts/bench.sh "${args[@]}"
echo "bench_smoke: --workers 2 took $(( $(date +%s) - start ))s"
grep -q '^  - {lcore: 2, rx: \[{port: in, queue: 1}\]}' "$out/run2/ipv4-small-router.yaml" \
  || { echo "bench_smoke: FAIL: the router config has no second worker on queue 1"; exit 1; }
python3 - "$out/bench2.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
s = doc["scenarios"][0]
bad = [k for k in ("router_mpps", "testpmd_io_mpps", "l3fwd_mpps", "source_rx_mpps",
                   "router_cycles_per_packet", "router_forwarding_cycles_per_packet")
       if not (isinstance(s.get(k), (int, float)) and s[k] > 0)]
if doc["settings"].get("workers") != 2 or bad:
    print("bench_smoke: FAIL: --workers 2: workers=%r, missing or not positive: %s"
          % (doc["settings"].get("workers"), bad))
    sys.exit(1)
print("bench_smoke: --workers 2: every figure present and positive")
PY

# The slow-path pressure mixes (issue 23): router only, each beside punt-noroute; every
# mix has its figures and its ratios to the reference, and each bad half was refused
# under the reason the mix is about (from the router's summary in its log).
args=(--quick --scenario punt-glean --scenario punt-ttl1 --json "$out/punt.json"
  --workdir "$out/run3" --startup-timeout 60 --no-build --no-l3fwd)
start=$(date +%s)
timeout 300 scripts/bench.sh "${args[@]}"
echo "bench_smoke: punt mixes took $(( $(date +%s) - start ))s"
for want in "punt-glean:glean_throttled" "punt-ttl1:ttl_expired_throttled"; do
  grep -q "^workers: .*${want#*:}=" "$out/run3/logs/${want%%:*}-router-r1.log" \
    || { echo "bench_smoke: FAIL: ${want%%:*} dropped nothing as ${want#*:}"; exit 1; }
done
python3 - "$out/punt.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
scen = {s["name"]: s for s in doc["scenarios"]}
bad = []
if list(scen) != ["punt-noroute", "punt-glean", "punt-ttl1"]:
    bad.append("scenarios: %s" % list(scen))
for name, s in scen.items():
    for k in ("router_mpps", "router_cycles_per_packet", "punt_good_vs_noroute",
              "punt_cycles_vs_noroute"):
        if not (isinstance(s.get(k), (int, float)) and s[k] > 0):
            bad.append("%s.%s = %r" % (name, k, s.get(k)))
if bad:
    print("bench_smoke: FAIL: punt mixes: %s" % bad)
    sys.exit(1)
print("bench_smoke: punt mixes: every figure and ratio present and positive")
PY
