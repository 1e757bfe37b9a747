#!/usr/bin/env bash
# Latency the seed's way: UDP request/response (netperf UDP_RR shape, crates/udp-rr)
# between two Linux hosts in network namespaces, through the router on net_af_packet
# ports, side by side with Linux IP forwarding over the same namespaces and veths.
# Rows: labels (0 = plain IP, 1, 2) x next hops (1, 2) x family (IPv4; IPv6: native for
# 0 labels, 6PE for 1 and 2: IPv6 routes pushed with labels towards IPv4 next hops, the
# egress pops to IPv6), then (IPv4) the RTT while a paced background flood crosses the
# same path, then one row with the idle backoff policy.
# Method, layout and figures: docs/benchmarks.md, "Latency". Needs root.
#
#   scripts/bench/latency.sh [options]
#     --duration S     measured seconds per row (default 10)
#     --warmup S       unmeasured seconds first (default 1)
#     --family F       ipv4, ipv6 or both (default both); the flood and backoff rows are
#                      IPv4 rows and run when F takes IPv4
#     --flood-rate PPS background load of the flood rows (default 20000; 0: no flood rows)
#     --quick          smoke: 2 s rows, only 1 label x 1 next hop, Linux 2 hops, per
#                      family; no flood or backoff row (about 20 s for both families)
#     --out DIR        per-row JSON, logs and table.md (default target/bench/latency)
#     --no-build       use the binaries already built
#     (the full run's last row is Linux at one hop with the server on CPU 1, below)
#
# Layout (2 CPUs): the client, the server and the flood are pinned to CPU 0; the router
# is one process, main lcore on CPU 0, its one worker on CPU 1 (busy polling, DPDK's
# usual setting, except in the backoff row). Labelled rows take two router hops: the
# router's ports b and c are the two ends of one veth pair, so a request enters at a,
# gets its labels pushed towards b, comes back in at c, is popped there and leaves at d
# (and the response the same way back). Plain IPv4 rows take one router hop (a -> d): one
# process has one FIB, and an unlabelled packet looped back into it would be routed the
# same way again. Linux is measured at one hop (r1) and at two hops (r1, r2: two
# namespaces, for the same reason) over the same veths, and each router row is set
# beside the Linux row with the same number of hops. IPv6 rows: the same veths and hops
# with IPv6 on the hosts (addresses nodad, NDP real) and, for Linux, on r1/r2
# (forwarding on); the router's namespace keeps IPv6 off (its kernel stays silent).
# Linux forwards in softirq context on the sender's CPU, so its rows run on CPU 0 alone,
# while every router crossing moves between the worker's CPU and CPU 0. The row
# linux-h1-n1-split (IPv4 runs, not --quick) puts the server on CPU 1 instead, so that
# Linux too crosses CPUs: session 25 measured that layout alone costing Linux 16x.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$REPO"
export PATH="$HOME/.cargo/bin:$PATH"

DURATION=10
WARMUP=1
FLOOD_RATE=20000
FAMILY=both
QUICK=0
SERVER_CPU=0 # the server's and the sink's CPU (1 only in the split row)
OUT=target/bench/latency
BUILD=1
need() { [ $# -ge 2 ] || { echo "latency.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) need "$@"; DURATION="$2"; shift 2 ;;
    --warmup) need "$@"; WARMUP="$2"; shift 2 ;;
    --flood-rate) need "$@"; FLOOD_RATE="$2"; shift 2 ;;
    --family) need "$@"; FAMILY="$2"; shift 2 ;;
    --out) need "$@"; OUT="$2"; shift 2 ;;
    --quick) QUICK=1; DURATION=2; WARMUP=0.5; shift ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "latency.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
die() { echo "latency.sh: $*" >&2; exit 1; }
[[ "$FLOOD_RATE" =~ ^[0-9]+$ ]] || die "--flood-rate wants a number of packets/s"
case "$FAMILY" in
  ipv4) FAMILIES=(4) ;; ipv6) FAMILIES=(6) ;; both) FAMILIES=(4 6) ;;
  *) die "--family wants ipv4, ipv6 or both, got '$FAMILY'" ;;
esac
for v in "$DURATION" "$WARMUP"; do
  [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--duration and --warmup want seconds, got '$v'"
done
[ "$(id -u)" = 0 ] || die "needs root (network namespaces, af_packet)"
for t in ip ethtool taskset python3 ping; do command -v $t >/dev/null || die "$t not found"; done
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs (router worker on CPU 1, hosts on CPU 0)"

if [ "$BUILD" = 1 ]; then
  echo "latency.sh: cargo build --release --bin mplsrouter --bin udp_rr" >&2
  cargo build --release --quiet -p mplsrouter --bin mplsrouter -p udp-rr --bin udp_rr
fi
ROUTER="$REPO/target/release/mplsrouter"
RR="$REPO/target/release/udp_rr"
[ -x "$ROUTER" ] && [ -x "$RR" ] || die "binaries not built (drop --no-build)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
rm -f "$OUT"/*.json "$OUT"/*.log

# --- clean-up: every process started here by PID, every namespace by its unique name.
P="lat$$"
NS=("$P-c" "$P-s" "$P-r1" "$P-r2")
C=$P-c S=$P-s R1=$P-r1 R2=$P-r2
PIDS=()
stop_pids() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  PIDS=()
}
cleanup() {
  stop_pids
  local n
  for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- topology. Every veth end gets a fixed MAC (the router's static neighbours name
# them) and checksum offload off (af_packet must see complete checksums).
# Background processes are started with `ip netns exec` itself, never through a shell
# function: `ip netns exec` and `taskset` exec their command, so $! is its PID.
in_ns() { ip netns exec "$1" "${@:2}"; }
veth() { # ns_a if_a mac_a ns_b if_b mac_b
  ip link add "$2" address "$3" netns "$1" type veth peer name "$5" address "$6" netns "$4"
  local ns i ns_i
  for ns_i in "$1:$2" "$4:$5"; do
    ns=${ns_i%%:*} i=${ns_i#*:}
    ip -n "$ns" link set dev "$i" up
    in_ns "$ns" ethtool -K "$i" tx off rx off >/dev/null
  done
}
MAC_A=02:00:00:00:0a:01 MAC_B=02:00:00:00:0b:01 MAC_C=02:00:00:00:0c:01 MAC_D=02:00:00:00:0d:01
# hops: 1 = c - r1:a | r1:d - s;  2 = c - r1:a | r1:b - RB:c | RB:d - s, where RB is r2
# for Linux and r1 itself for the router (both ends of b-c in the router's namespace).
topo() { # hops kind(linux|router) family(4|6)
  local hops=$1 kind=$2 fam=$3 n rb v6off
  cleanup
  for n in "${NS[@]}"; do
    ip netns add "$n"
    # IPv6 off (no ND noise) except, in the IPv6 rows, on the hosts and Linux routers.
    v6off=1
    if [ "$fam" = 6 ] && { [ "$n" = "$C" ] || [ "$n" = "$S" ] || [ "$kind" = linux ]; }; then v6off=0; fi
    in_ns "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=$v6off net.ipv6.conf.default.disable_ipv6=$v6off
    # No DAD: link-local addresses usable at once (a tentative one stalls NDP ~2 s).
    [ "$v6off" = 1 ] || in_ns "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
    ip -n "$n" link set lo up
  done
  rb=$R1
  if [ "$hops" = 2 ] && [ "$kind" = linux ]; then rb=$R2; fi
  veth "$C" eth0 02:00:00:00:01:02 "$R1" p-a $MAC_A
  if [ "$hops" = 2 ]; then veth "$R1" p-b $MAC_B "$rb" p-c $MAC_C; fi
  veth "$rb" p-d $MAC_D "$S" eth0 02:00:00:00:02:02
  # Hosts: two addresses each (the two next hops of the 2-next-hop rows lead to the
  # same host), the service address on the server's loopback.
  ip -n "$C" addr add 10.1.0.2/24 dev eth0
  ip -n "$C" addr add 10.1.0.3/24 dev eth0
  ip -n "$C" route add default via 10.1.0.1
  ip -n "$S" addr add 10.2.0.2/24 dev eth0
  ip -n "$S" addr add 10.2.0.3/24 dev eth0
  ip -n "$S" addr add 10.9.0.2/32 dev lo
  ip -n "$S" route add default via 10.2.0.1 src 10.9.0.2
  [ "$fam" = 6 ] || return 0
  # The same plan in IPv6: 2001:db8:1::2/::3, 2001:db8:2::2/::3, service 2001:db8:9::2.
  ip -n "$C" addr add 2001:db8:1::2/64 dev eth0 nodad
  ip -n "$C" addr add 2001:db8:1::3/64 dev eth0 nodad
  ip -n "$C" -6 route add default via 2001:db8:1::1 dev eth0
  ip -n "$S" addr add 2001:db8:2::2/64 dev eth0 nodad
  ip -n "$S" addr add 2001:db8:2::3/64 dev eth0 nodad
  ip -n "$S" addr add 2001:db8:9::2/128 dev lo
  ip -n "$S" -6 route add default via 2001:db8:2::1 dev eth0 src 2001:db8:9::2
}

# Linux forwarding: r1 (and r2) with ip_forward, every hop's route with 1 or 2 next hops.
mp() { # nh gw1 gw2 -> "via gw1" or "nexthop via gw1 nexthop via gw2"
  if [ "$1" = 1 ]; then echo "via $2"; else echo "nexthop via $2 nexthop via $3"; fi
}
linux_setup() { # hops nh family
  local hops=$1 nh=$2 fam=$3
  topo "$hops" linux "$fam"
  if [ "$fam" = 6 ]; then linux_setup6 "$hops" "$nh"; return; fi
  in_ns "$R1" sysctl -qw net.ipv4.ip_forward=1
  ip -n "$R1" addr add 10.1.0.1/24 dev p-a
  if [ "$hops" = 1 ]; then
    ip -n "$R1" addr add 10.2.0.1/24 dev p-d
    ip -n "$R1" route add 10.9.0.2/32 $(mp "$nh" 10.2.0.2 10.2.0.3)
    ip -n "$R1" route add 10.1.0.2/32 $(mp "$nh" 10.1.0.2 10.1.0.3)
  else
    in_ns "$R2" sysctl -qw net.ipv4.ip_forward=1
    ip -n "$R1" addr add 10.12.0.1/24 dev p-b
    ip -n "$R1" addr add 10.12.0.4/24 dev p-b
    ip -n "$R2" addr add 10.12.0.2/24 dev p-c
    ip -n "$R2" addr add 10.12.0.3/24 dev p-c
    ip -n "$R2" addr add 10.2.0.1/24 dev p-d
    ip -n "$R1" route add 10.9.0.2/32 $(mp "$nh" 10.12.0.2 10.12.0.3)
    ip -n "$R1" route add 10.1.0.2/32 $(mp "$nh" 10.1.0.2 10.1.0.3)
    ip -n "$R2" route add 10.9.0.2/32 $(mp "$nh" 10.2.0.2 10.2.0.3)
    ip -n "$R2" route add 10.1.0.2/32 $(mp "$nh" 10.12.0.1 10.12.0.4)
  fi
}
# The same in IPv6 (the hosts' part is in topo): forwarding on, addresses nodad.
linux_setup6() { # hops nh
  local hops=$1 nh=$2
  in_ns "$R1" sysctl -qw net.ipv6.conf.all.forwarding=1
  ip -n "$R1" addr add 2001:db8:1::1/64 dev p-a nodad
  if [ "$hops" = 1 ]; then
    ip -n "$R1" addr add 2001:db8:2::1/64 dev p-d nodad
    ip -n "$R1" -6 route add 2001:db8:9::2/128 $(mp "$nh" 2001:db8:2::2 2001:db8:2::3)
    ip -n "$R1" -6 route add 2001:db8:1::2/128 $(mp "$nh" 2001:db8:1::2 2001:db8:1::3)
  else
    in_ns "$R2" sysctl -qw net.ipv6.conf.all.forwarding=1
    ip -n "$R1" addr add 2001:db8:12::1/64 dev p-b nodad
    ip -n "$R1" addr add 2001:db8:12::4/64 dev p-b nodad
    ip -n "$R2" addr add 2001:db8:12::2/64 dev p-c nodad
    ip -n "$R2" addr add 2001:db8:12::3/64 dev p-c nodad
    ip -n "$R2" addr add 2001:db8:2::1/64 dev p-d nodad
    ip -n "$R1" -6 route add 2001:db8:9::2/128 $(mp "$nh" 2001:db8:12::2 2001:db8:12::3)
    ip -n "$R1" -6 route add 2001:db8:1::2/128 $(mp "$nh" 2001:db8:1::2 2001:db8:1::3)
    ip -n "$R2" -6 route add 2001:db8:9::2/128 $(mp "$nh" 2001:db8:2::2 2001:db8:2::3)
    ip -n "$R2" -6 route add 2001:db8:1::2/128 $(mp "$nh" 2001:db8:12::1 2001:db8:12::4)
  fi
}

# The router's routes: YAML next hops, with the labels to push (outermost first).
nhs() { # nh push gw1 gw2
  local push=""; [ -n "$2" ] && push=", push: [$2]"
  if [ "$1" = 1 ]; then echo "via: $3$push"
  else echo "nexthops: [{via: $3$push}, {via: $4$push}]"; fi
}
router_routes() { # labels nh family
  local labels=$1 nh=$2 fam=$3
  # Per family: the routes section, the far hosts' prefixes and their gateways. IPv6
  # labelled rows are 6PE: the IPv6 prefixes are pushed towards the IPv4 b/c next hops.
  local sec=ipv4 srv=10.9.0.2/32 cli=10.1.0.2/32
  local s1=10.2.0.2 s2=10.2.0.3 c1=10.1.0.2 c2=10.1.0.3
  if [ "$fam" = 6 ]; then
    sec=ipv6 srv='"2001:db8:9::2/128"' cli='"2001:db8:1::2/128"'
    s1='"2001:db8:2::2"' s2='"2001:db8:2::3"' c1='"2001:db8:1::2"' c2='"2001:db8:1::3"'
  fi
  if [ "$labels" = 0 ]; then
    echo "$sec:"
    echo "  - {prefix: $srv, $(nhs "$nh" "" "$s1" "$s2")}"
    echo "  - {prefix: $cli, $(nhs "$nh" "" "$c1" "$c2")}"
    return
  fi
  # b and c are two ends of one wire: each sees the other's MAC as its neighbours'.
  echo "neighbors:"
  echo "  - {ip: 10.12.0.2, mac: \"$MAC_C\", port: b}"
  echo "  - {ip: 10.12.0.3, mac: \"$MAC_C\", port: b}"
  echo "  - {ip: 10.21.0.2, mac: \"$MAC_B\", port: c}"
  echo "  - {ip: 10.21.0.3, mac: \"$MAC_B\", port: c}"
  local fwd=100 back=300
  [ "$labels" = 2 ] && fwd="100, 200" back="300, 400"
  echo "$sec:   # ingress LER: push"
  echo "  - {prefix: $srv, $(nhs "$nh" "$fwd" 10.12.0.2 10.12.0.3)}"
  echo "  - {prefix: $cli, $(nhs "$nh" "$back" 10.21.0.2 10.21.0.3)}"
  echo "mpls:   # egress LER: pop (both labels) and forward as IPv$fam (the next hop's family)"
  if [ "$labels" = 1 ]; then
    echo "  - {in_label: 100, action: pop, $(nhs "$nh" "" "$s1" "$s2")}"
    echo "  - {in_label: 300, action: pop, $(nhs "$nh" "" "$c1" "$c2")}"
  else
    echo "  - {in_label: 100, action: pop_and_lookup}"
    echo "  - {in_label: 200, action: pop, $(nhs "$nh" "" "$s1" "$s2")}"
    echo "  - {in_label: 300, action: pop_and_lookup}"
    echo "  - {in_label: 400, action: pop, $(nhs "$nh" "" "$c1" "$c2")}"
  fi
}
ROUTER_PID=""
router_setup() { # labels nh idle(busy|backoff) name family
  local labels=$1 nh=$2 idle=$3 name=$4 fam=$5 hops=1 i cfg routes idle_yaml
  [ "$labels" = 0 ] || hops=2
  topo "$hops" router "$fam"
  cfg="$OUT/$name-router.yaml" routes="$OUT/$name-routes.yaml"
  router_routes "$labels" "$nh" "$fam" > "$routes"
  idle_yaml=busy_poll
  [ "$idle" = backoff ] && idle_yaml="{backoff: {}}"
  {
    echo "# Generated by scripts/bench/latency.sh ($name); not a config to edit."
    echo "eal: {lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: $P-$name}"
    echo "ports:"
    for i in a b c d; do
      [ "$hops" = 1 ] && [[ $i == [bc] ]] && continue
      local addr
      case $i in a) addr=10.1.0.1/24 ;; b) addr=10.12.0.1/24 ;; c) addr=10.21.0.1/24 ;; d) addr=10.2.0.1/24 ;; esac
      if [ "$fam" = 6 ]; then # the hosts' gateways; b and c stay IPv4 (the 6PE core)
        case $i in a) addr+=', "2001:db8:1::1/64"' ;; d) addr+=', "2001:db8:2::1/64"' ;; esac
      fi
      echo "  - {name: $i, vdev: \"net_af_packet_$i,iface=p-$i\", addresses: [$addr]}"
    done
    echo "idle: $idle_yaml"
    echo 'metrics_listen: "127.0.0.1:0"'
    echo "routes: $routes"
  } > "$cfg"
  "$ROUTER" check "$cfg" > "$OUT/$name-check.log" 2>&1 \
    || { cat "$OUT/$name-check.log" >&2; die "$name: router config refused"; }
  local log="$OUT/$name-router.log"
  ip netns exec "$R1" "$ROUTER" run --config "$cfg" --stats-interval 0 --duration "$(python3 -c "print(int($DURATION + $WARMUP) + 90)")" > "$log" 2>&1 &
  ROUTER_PID=$!
  PIDS+=("$ROUTER_PID")
  for _ in $(seq 300); do
    grep -qs "tables: generation" "$log" && return 0
    kill -0 "$ROUTER_PID" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log" >&2
  die "$name: the router did not come up"
}

# --- one measurement: server (and sink/flood), warm-up ping, the client.
measure() { # name family [flood]
  local name=$1 fam=$2 flood=${3:-0} ok=0
  # The service address, the client's source, the wildcard, in the row's family.
  local srv=10.9.0.2 cli=10.1.0.2 any=0.0.0.0
  [ "$fam" = 6 ] && srv="[2001:db8:9::2]" cli="[2001:db8:1::2]" any="[::]"
  ip netns exec "$S" taskset -c "$SERVER_CPU" "$RR" server --bind "$any:7777" > "$OUT/$name-server.log" 2>&1 &
  PIDS+=($!)
  # ARP or NDP on every hop, and the path proven, before anything is timed.
  for _ in $(seq 20); do
    # From the client's measured address (IPv6 would pick 2001:db8:1::3, the last added).
    # (Brackets dropped by expansion, not a command substitution: a SIGTERM that lands
    # while bash parses one makes the trap a syntax error, exit 2 instead of 130.)
    if in_ns "$C" ping -"$fam" -q -c 1 -W 1 -I "${cli//[\[\]]/}" "${srv//[\[\]]/}" >/dev/null 2>&1; then ok=1; break; fi
    sleep 0.2 # a ping that fails at once (no route or neighbour yet) must not use up the tries
  done
  if [ "$ok" != 1 ]; then
    [ -n "$ROUTER_PID" ] && tail -n 40 "$OUT"/*-router.log >&2
    die "$name: no ping reply from the server through the path"
  fi
  local span
  span=$(python3 -c "print($DURATION + $WARMUP + 1)")
  if [ "$flood" != 0 ]; then
    ip netns exec "$S" taskset -c "$SERVER_CPU" "$RR" sink --bind "$any:9000" --duration "$(python3 -c "print($span + 2)")" \
      > "$OUT/$name-sink.log" 2>&1 &
    PIDS+=($!)
    ip netns exec "$C" taskset -c 0 "$RR" flood --target "$srv:9000" --rate "$flood" --duration "$span" \
      > "$OUT/$name-flood.log" 2>&1 &
    PIDS+=($!)
  fi
  # In the background and waited for: a SIGTERM interrupts `wait` at once (a foreground
  # command would hold the trap back until the row ends).
  ip netns exec "$C" taskset -c 0 "$RR" client --target "$srv:7777" --bind "$cli:0" \
    --duration "$DURATION" --warmup "$WARMUP" --label "$name" --json "$OUT/$name.json" \
    > "$OUT/$name-client.log" 2>&1 &
  local client=$!
  PIDS+=("$client")
  wait "$client" || { cat "$OUT/$name-client.log" >&2; die "$name: the client failed"; }
  cat "$OUT/$name-client.log"
  if [ "$flood" != 0 ]; then
    for _ in $(seq 100); do grep -q datagrams "$OUT/$name-sink.log" 2>/dev/null && break; sleep 0.1; done
    cat "$OUT/$name-flood.log" "$OUT/$name-sink.log"
  fi
}
router_row() { # family labels nh idle name [flood]
  router_setup "$2" "$3" "$4" "$5" "$1"
  measure "$5" "$1" "${6:-0}"
  stop_pids
  ROUTER_PID=""
  # The router's own account: every mbuf back, drops by reason.
  grep -E "^workers:|mbufs not returned" "$OUT/$5-router.log" || true
}
linux_row() { # family hops nh name [flood]
  linux_setup "$2" "$3" "$1"
  measure "$4" "$1" "${5:-0}"
  stop_pids
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "latency: load average before: $(load) ($(nproc) CPUs)" | tee "$OUT/host.log"
# Row names: router-lL-nN and linux-hH-nN for IPv4 (as before), router6-/linux6- for IPv6.
for fam in "${FAMILIES[@]}"; do
  t=""; [ "$fam" = 6 ] && t=6
  if [ "$QUICK" = 1 ]; then
    router_row "$fam" 1 1 busy "router$t-l1-n1"
    linux_row "$fam" 2 1 "linux$t-h2-n1"
    continue
  fi
  for nh in 1 2; do
    linux_row "$fam" 1 "$nh" "linux$t-h1-n$nh"
    linux_row "$fam" 2 "$nh" "linux$t-h2-n$nh"
    for labels in 0 1 2; do router_row "$fam" "$labels" "$nh" busy "router$t-l$labels-n$nh"; done
  done
done
if [ "$QUICK" = 0 ] && [ "$FAMILY" != ipv6 ]; then
  if [ "$FLOOD_RATE" -gt 0 ]; then
    router_row 4 1 1 busy router-l1-n1-flood "$FLOOD_RATE"
    linux_row 4 2 1 linux-h2-n1-flood "$FLOOD_RATE"
  fi
  router_row 4 1 1 backoff router-l1-n1-backoff
  SERVER_CPU=1 linux_row 4 1 1 linux-h1-n1-split
fi
echo "latency: load average after: $(load)" | tee -a "$OUT/host.log"
python3 "$REPO/scripts/bench/latency_table.py" "$OUT" "$FLOOD_RATE" | tee "$OUT/table.md"
