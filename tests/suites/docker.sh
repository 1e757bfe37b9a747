#!/usr/bin/env bash
# Container suite: the router image and the CI topology of docker/compose.yaml.
#
#  1. base image: docker/build-base.sh (debootstrap + docker import when nothing can be
#     pulled; cached across runs), runtime image with the Debian package of the host-built
#     binary (scripts/package.sh, docker/build-image.sh, target `prebuilt`) and the
#     test-host image;
#  2. `smoke` service (net_null ports): the data path runs, /metrics answers (see
#     METRICS below), SIGTERM stops it cleanly with every mbuf back and every packet
#     accounted for;
#  3. topology: hosta pings hostb (and a network behind hostb) through the router on
#     net_af_packet (replies with TTL 63), hostb and the router resolve each other by
#     ARP, the router answers echo requests and sends time exceeded; then the router is
#     stopped (clean exit, its counters saw the pings) and the same ping must fail, which
#     proves no other path exists;
#  4. everything the suite created (containers, networks, the packaged image) is removed,
#     also on failure or timeout. Cached: the base, runtime-base and test-host images.
#
# Skipped, with a message, only when no Docker engine is reachable.
#
# Knobs (environment):
#   (the binary packaged is target/release/mplsrouter: cargo build --release --bin mplsrouter)
#   MPLSROUTER_DOCKER_METRICS   require (default) | auto (auto: SKIP the /metrics checks,
#                               saying so, when nothing listens on the port)
#   MPLSROUTER_DOCKER_TIMEOUT   whole-suite limit in seconds (default 600)
set -euo pipefail
cd "$(dirname "$0")/../.."

METRICS=${MPLSROUTER_DOCKER_METRICS:-require}
LIMIT=${MPLSROUTER_DOCKER_TIMEOUT:-600}
BIN=target/release/mplsrouter
PROJECT=mplsrouter-ci
IMAGE=mplsrouter:suite
TESTHOST_IMAGE=mplsrouter-testhost:local
COMPOSE_FILE=docker/compose.yaml

T0=$(date +%s)
say() { printf 'docker suite [%4ss]: %s\n' "$(($(date +%s) - T0))" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

case "$METRICS" in auto|require) ;; *) fail "MPLSROUTER_DOCKER_METRICS must be auto or require" ;; esac

if ! timeout 20 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
  say "SKIP: no Docker engine reachable (docker version failed); container tests not run"
  exit 0
fi
if timeout 20 docker compose version >/dev/null 2>&1; then
  DC=(docker compose)
elif command -v docker-compose >/dev/null; then
  DC=(docker-compose)
else
  fail "a Docker engine is reachable but neither 'docker compose' nor 'docker-compose' is installed"
fi
DC+=(-p "$PROJECT" -f "$COMPOSE_FILE" --profile smoke)
export MPLSROUTER_IMAGE=$IMAGE MPLSROUTER_TESTHOST_IMAGE=$TESTHOST_IMAGE
dc() { timeout 120 "${DC[@]}" "$@"; }

# Removes everything the suite creates; the cached images stay.
teardown() {
  dc down -v --remove-orphans -t 5 >/dev/null 2>&1 || say "warning: compose down failed"
  docker image rm -f "$IMAGE" >/dev/null 2>&1 || true
  say "cleaned up (project $PROJECT, image $IMAGE); total $(($(date +%s) - T0))s"
}

# The suite runs as a child under timeout(1): one bound for all of it. The child tears
# down on any exit it sees; when it is killed (timeout, Ctrl-C) the parent does.
if [ -z "${MPLSROUTER_DOCKER_SUITE_CHILD:-}" ]; then
  export MPLSROUTER_DOCKER_SUITE_CHILD=1
  timeout -k 20 "$LIMIT" bash "$0" "$@" &
  child=$!
  trap 'kill -TERM "$child" 2>/dev/null || true' INT TERM
  rc=0
  while kill -0 "$child" 2>/dev/null; do
    wait "$child" && rc=0 || rc=$?
  done
  case "$rc" in
    0 | 1) ;;
    124) say "FAIL: exceeded ${LIMIT}s (MPLSROUTER_DOCKER_TIMEOUT)"; teardown ;;
    *) say "FAIL: interrupted (status $rc)"; teardown ;;
  esac
  exit "$rc"
fi

# Two runs on one host would fight over the project and its subnets: take turns.
exec 9>/tmp/mplsrouter-docker-suite.lock
flock -w 300 9 || fail "another docker suite run holds /tmp/mplsrouter-docker-suite.lock"

on_exit() {
  local rc=$?
  trap - EXIT
  if [ "$rc" != 0 ]; then
    say "logs of the failed run:"
    dc logs --no-color --tail 40 2>&1 | sed 's/^/    /' || true
  fi
  teardown
  exit "$rc"
}
trap on_exit EXIT

# Leftovers of an aborted earlier run.
dc down -v --remove-orphans -t 2 >/dev/null 2>&1 || true

# --- 1. images ------------------------------------------------------------------------
[ -x "$BIN" ] || fail "no binary at $BIN (cargo build --release --bin mplsrouter)"
t=$(date +%s)
BASE=$(docker/build-base.sh | tail -n1) || fail "no base image (docker/build-base.sh)"
say "base image $BASE ($(($(date +%s) - t))s)"
t=$(date +%s)
DEB=$(scripts/package.sh --no-build | tail -n1) || fail "scripts/package.sh failed"
docker/build-image.sh --deb "$DEB" --base "$BASE" --tag "$IMAGE" --testhost \
  --testhost-tag "$TESTHOST_IMAGE" >/dev/null || fail "image build failed"
say "images $IMAGE, $TESTHOST_IMAGE built ($(($(date +%s) - t))s)"

cid() { dc ps -q "$1"; }
# wait_log CONTAINER REGEX SECONDS
wait_log() {
  local i
  for ((i = 0; i < $3 * 5; i++)); do
    grep -Eq "$2" <<<"$(docker logs "$1" 2>&1)" && return 0
    [ "$(docker inspect -f '{{.State.Running}}' "$1")" = true ] || return 1
    sleep 0.2
  done
  return 1
}
# stop_clean CONTAINER: SIGTERM, wait, require exit status 0 and the final summary
# with every mbuf back in the pool.
stop_clean() {
  timeout 60 docker stop -t 20 "$1" >/dev/null
  local code
  code=$(docker inspect -f '{{.State.ExitCode}}' "$1")
  [ "$code" = 0 ] || fail "$2 exited with status $code after SIGTERM"
  # Not `docker logs | grep -q`: grep quits at the match, docker logs then dies of
  # SIGPIPE writing the lines after it, and pipefail turns a clean stop into a failure.
  grep -q '^mbufs not returned to the pool: 0$' <<<"$(docker logs "$1" 2>&1)" ||
    fail "$2: no clean summary (mbufs not returned to the pool: 0) after SIGTERM"
}
# field NAME LINE: the number after NAME in a summary line
field() { sed -nE "s/.* $1 ([0-9]+).*/\1/p" <<<"$2"; }

# --- 2. smoke service on net_null -----------------------------------------------------
t=$(date +%s)
dc up -d smoke >/dev/null 2>&1 || fail "compose up smoke"
SMOKE=$(cid smoke)
wait_log "$SMOKE" '^\[ *[0-9.]+s\] gen rx' 30 ||
  fail "smoke: the router printed no counters line within 30s"
say "smoke: router up on net_null ($(($(date +%s) - t))s)"

SMOKE_IP=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$SMOKE" | awk '{print $1}')
URL="http://$SMOKE_IP:9550/metrics"
scrape() { curl -sS -m 5 -o "$1" -w '%{http_code} %{content_type}' "$URL"; }
m1=$(mktemp) m2=$(mktemp)
rc=0
head1=$(scrape "$m1" 2>/dev/null) || rc=$?
if [ "$rc" = 7 ] && [ "$METRICS" = auto ]; then
  say "SKIP /metrics: nothing listens on $URL yet (connection refused): the metrics endpoint is not yet available; set MPLSROUTER_DOCKER_METRICS=require once it is"
else
  [ "$rc" = 0 ] || fail "/metrics: curl $URL failed (exit $rc)"
  case "$head1" in
    "200 text/plain"*) ;;
    *) fail "/metrics answered '$head1', want status 200 and text/plain" ;;
  esac
  grep -q '^mplsrouter_' "$m1" || fail "/metrics has no mplsrouter_ sample"
  if command -v promtool >/dev/null; then
    promtool check metrics <"$m1" || fail "/metrics: promtool check metrics found problems"
  fi
  # The `gen` port receives all the time: its receive counter must grow between scrapes.
  sleep 1.2
  scrape "$m2" >/dev/null || fail "/metrics: second scrape failed"
  rx() { grep -E '^mplsrouter_[a-z_]*rx_packets_total\{[^}]*port="gen"' "$1" | awk '{print $2}' | head -n1; }
  r1=$(rx "$m1") r2=$(rx "$m2")
  [ -n "$r1" ] || fail "/metrics: no mplsrouter_*rx_packets_total{port=\"gen\"} sample"
  awk -v a="$r1" -v b="$r2" 'BEGIN { exit !(b > a) }' ||
    fail "/metrics: rx packets of port gen did not grow ($r1 -> $r2)"
  say "/metrics: ok (promtool clean, port gen rx $r1 -> $r2)"
fi
rm -f "$m1" "$m2"

stop_clean "$SMOKE" smoke
w=$(docker logs "$SMOKE" 2>&1 | grep '^workers: received' | tail -n1) || true
recv=$(field received "$w") fwd=$(field forwarded "$w") ref=$(field tx-refused "$w")
drp=$(field dropped "$w") slow=$(field slow-path "$w") full=$(field slow-path-queue-full "$w")
[ -n "$recv" ] && [ "$recv" -gt 0 ] || fail "smoke: workers received no packets: $w"
# Every received packet ends somewhere; the router's own packets (ARP, ICMP) may add to
# `forwarded`, so the sum can exceed `received` but never fall short.
[ "$recv" -le "$((fwd + ref + drp + slow + ${full:-0}))" ] ||
  fail "smoke: packets unaccounted for (received > forwarded + tx-refused + dropped + slow-path + queue-full): $w"
genrx=$(docker logs "$SMOKE" 2>&1 | sed -nE 's/^port gen: rx ([0-9]+) pkts.*/\1/p' | tail -n1)
[ "$genrx" = "$recv" ] || fail "smoke: port gen rx ($genrx) != packets the workers received ($recv)"
say "smoke: clean stop, $recv packets received and all accounted for ($(($(date +%s) - t))s)"

# --- 3. topology ----------------------------------------------------------------------
t=$(date +%s)
dc up -d router hosta hostb >/dev/null 2>&1 || fail "compose up of the topology"
ROUTER=$(cid router) HOSTA=$(cid hosta) HOSTB=$(cid hostb)
wait_log "$ROUTER" '^\[ *[0-9.]+s\] lan_a rx' 30 ||
  fail "router: no counters line within 30s (af_packet ports did not come up?)"
for h in "$HOSTA" "$HOSTB"; do
  wait_log "$h" 'host-entrypoint: .* ready' 20 || fail "a test host did not get ready"
done
say "topology up ($(($(date +%s) - t))s)"

PINGS=5
# ping_ttl CONTAINER DEST [ping options]: prints the TTLs of the replies, one per line
# (callers count them: the exit status is ping's, non-zero when replies are missing)
ping_ttl() {
  local c=$1 d=$2
  shift 2
  timeout 20 docker exec "$c" ping -n -c "$PINGS" -i 0.2 -W 1 "$@" "$d" 2>&1 |
    sed -nE 's/.* ttl=([0-9]+).*/\1/p'
}
# expect_replies DEST TTL: every ping from hosta answered, every reply with this TTL
expect_replies() {
  local ttls
  ttls=$(ping_ttl "$HOSTA" "$1") || true
  [ "$(grep -c . <<<"$ttls")" = "$PINGS" ] ||
    fail "ping hosta -> $1: $(grep -c . <<<"$ttls")/$PINGS replies"
  [ "$(sort -u <<<"$ttls")" = "$2" ] ||
    fail "ping hosta -> $1: reply TTLs $(sort -u <<<"$ttls" | tr '\n' ' ')want $2"
}

# hosta knows the router's MAC statically and the router knows hosta's; hostb and the
# router find each other with ARP. One warm-up ping lets that resolution happen.
timeout 10 docker exec "$HOSTA" ping -n -c 1 -W 2 10.77.2.10 >/dev/null 2>&1 || true
# hostb replies with TTL 64; the router must decrement it once.
expect_replies 10.77.2.10 63
expect_replies 10.77.20.1 63
say "ping hosta -> hostb and -> 10.77.20.1 (route via hostb) through the router: ok, TTL 63"
out=$(docker exec "$HOSTB" ip neigh show 10.77.2.254)
grep -q 'lladdr 02:00:00:77:02:fe' <<<"$out" ||
  fail "hostb did not resolve the router 10.77.2.254 by ARP to 02:00:00:77:02:fe: '$out'"
# The router's own address answers (ICMP echo from its slow path), and TTL 1 expires there.
expect_replies 10.77.1.254 64
out=$(timeout 20 docker exec "$HOSTA" ping -n -c 2 -W 1 -t 1 10.77.2.10 2>&1 || true)
grep -q 'From 10.77.1.254 .*Time to live exceeded' <<<"$out" ||
  fail "TTL 1 through the router: no time exceeded from 10.77.1.254: $out"
say "router ARP (hostb <-> router), echo reply from 10.77.1.254, time exceeded at TTL 1: ok"

stop_clean "$ROUTER" router
logs=$(docker logs "$ROUTER" 2>&1)
a_rx=$(sed -nE 's/^port lan_a: rx ([0-9]+) pkts.*/\1/p' <<<"$logs" | tail -n1)
b_tx=$(sed -nE 's/^port lan_b: rx [0-9]+ pkts [0-9]+ bytes, tx ([0-9]+) pkts.*/\1/p' <<<"$logs" | tail -n1)
[ "${a_rx:-0}" -ge $((2 * PINGS)) ] && [ "${b_tx:-0}" -ge $((2 * PINGS)) ] ||
  fail "router counters do not show the pings (lan_a rx ${a_rx:-?}, lan_b tx ${b_tx:-?}, want >= $((2 * PINGS)))"
n=$(ping_ttl "$HOSTA" 10.77.2.10 | grep -c . || true)
[ "$n" = 0 ] || fail "hosta still reaches hostb with the router stopped ($n replies): another path exists"
say "router stopped cleanly (lan_a rx $a_rx, lan_b tx $b_tx); with it gone hostb is unreachable: ok ($(($(date +%s) - t))s)"

say "PASS"
