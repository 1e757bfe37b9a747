#!/usr/bin/env bash
# Records what FRR's zebra (dplane_fpm_nl) sends over FPM for a set of scenarios, as decoder
# fixtures: OUT/<scenario>[-nonhg].<conn>.<part>.bin (raw FPM frames, see fpm_recorder.py)
# plus a decoded .txt of each (fpm_dump.py). Part 0 is the dump after connect, the next parts
# are the steps of the scenario (adds, deletes, ...). Runs zebra + staticd in a private network
# namespace (veth ports port0..port2 = 10.0.0.1/24, 10.0.1.1/24, 10.0.2.1/24) and a private
# mount namespace that shows zebra a /proc/sys/net/mpls, so MPLS stays on without the kernel
# module. Needs root and Debian's frr. usage: record-fixtures.sh OUTDIR [scenario...]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(realpath -m "$1"); shift
mkdir -p "$OUT"
NS=frrrec$$
W=$(mktemp -d /tmp/frrrec.XXXXXX)
chmod 755 "$W"
PIDS=()

# SIGTERM, then SIGKILL after 3 s (zebra with dplane_fpm_nl does not always exit on TERM).
stop_pids() {
  local p t
  for p in "$@"; do kill "$p" 2>/dev/null || true; done
  for p in "$@"; do
    for t in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
}

cleanup() {
  stop_pids "${PIDS[@]}"
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT

ip netns add "$NS"
ip -n "$NS" link set lo up
for i in 0 1 2; do
  ip -n "$NS" link add "port$i" type veth peer name "peer$i"
  ip -n "$NS" link set "port$i" up
  ip -n "$NS" link set "peer$i" up
  ip -n "$NS" addr add "10.0.$i.1/24" dev "port$i"
done
ip -n "$NS" -o link show | awk '{print $1, $2}' > "$OUT/ifindexes.txt"

mkdir -p "$W/run" "$W/procnet/mpls/conf" "$W/procnet"/{ipv4,ipv6,core}
echo 1048575 > "$W/procnet/mpls/platform_labels"
for i in lo port0 port1 port2; do mkdir -p "$W/procnet/mpls/conf/$i"; echo 1 > "$W/procnet/mpls/conf/$i/input"; done
chown frr:frr "$W/run"
# zebra's kernel writes are ACKed unapplied (see nl_shim.c): without it nothing labelled
# reaches FPM on a kernel without MPLS. NL_SHIM=0 records the unshimmed behaviour.
PRELOAD=""
if [ "${NL_SHIM:-1}" = 1 ]; then
  cc -shared -fPIC -O2 -o "$W/nl_shim.so" "$HERE/nl_shim.c" -ldl
  chmod 755 "$W/nl_shim.so"
  PRELOAD="env LD_PRELOAD=$W/nl_shim.so"
fi

vty() { timeout 10 vtysh --vty_socket "$W/run" "$@"; }

status() { cat "$W/cap.status" 2>/dev/null || echo "0 0 0 0"; }

# Waits until the recorder has seen connection $1 and more than $2 frames, then no new frame
# for 1.5 s (bounded 30 s).
settle() {
  local want=$1 min=${2:--1} quiet=${3:-15} last="" same=0 t=0
  while :; do
    local s; s=$(status); read -r c _ f _ <<< "$s"
    if [ "$c" -ge "$want" ] && [ "$f" -gt "$min" ] && [ "$s" = "$last" ]; then same=$((same + 1)); else same=0; fi
    [ $same -ge "$quiet" ] && return 0
    last=$s; sleep 0.1; t=$((t + 1))
    [ $t -gt 300 ] && { echo "settle: timeout (connection $want, frames > $min; now $s)" >&2
      tail -n 30 "$W/zebra.log" "$W/staticd.log" >&2; vty -c "show ip route" >&2; return 1; }
  done
}

frames() { local c p f b; read -r c p f b <<< "$(status)"; echo "$f"; }

start_zebra() {
  ip netns exec "$NS" unshare -m --propagation private sh -c "
    for d in ipv4 ipv6 core; do mount --bind /proc/sys/net/\$d $W/procnet/\$d; done
    mount --bind $W/procnet /proc/sys/net
    exec $PRELOAD /usr/lib/frr/zebra -M dplane_fpm_nl -u frr -g frr -f $W/zebra.conf -i $W/run/zebra.pid \
      -z $W/run/zserv.api --vty_socket $W/run --log file:$W/zebra.log" >> "$W/zebra.out" 2>&1 &
  ZPID=$!; PIDS+=("$ZPID")
  for _ in $(seq 100); do [ -S "$W/run/zserv.api" ] && [ -S "$W/run/zebra.vty" ] && return 0; sleep 0.1; done
  echo "zebra did not start: $(cat "$W/zebra.out")" >&2; return 1
}

start_staticd() {
  ip netns exec "$NS" /usr/lib/frr/staticd -u frr -g frr -f "$W/staticd.conf" -i "$W/run/staticd.pid" \
    -z "$W/run/zserv.api" --vty_socket "$W/run" --log "file:$W/staticd.log" >> "$W/staticd.out" 2>&1 &
  PIDS+=("$!")
  for _ in $(seq 100); do [ -S "$W/run/staticd.vty" ] && return 0; sleep 0.1; done
  echo "staticd did not start" >&2; return 1
}

# scenario NAME NHG(yes|no) ZEBRA_EXTRA STATIC_EXTRA STEP...  Each STEP is a newline-separated
# list of config lines applied with vtysh, recorded as the next part.
scenario() {
  local name=$1 nhg=$2 zextra=$3 sextra=$4; shift 4
  rm -f "$W"/cap.* "$W"/run/*
  { echo "hostname zebra"; echo "fpm address 127.0.0.1 port 2620"
    [ "$nhg" = no ] && echo "no fpm use-next-hop-groups"
    echo "debug zebra fpm"; echo "debug zebra mpls"; echo "debug zebra rib"
    printf '%s\n' "$zextra"; } > "$W/zebra.conf"
  echo "hostname staticd" > "$W/staticd.conf"
  chown frr:frr "$W"/*.conf
  ip netns exec "$NS" python3 "$HERE/fpm_recorder.py" 127.0.0.1 2620 "$W/cap" > "$W/rec.out" 2>&1 &
  local rpid=$!; PIDS+=("$rpid")
  start_zebra; start_staticd
  # staticd refuses `label` until zebra told it MPLS is on (after its config file was
  # read): apply its routes through vtysh, retrying until accepted.
  if [ -n "$sextra" ]; then
    local args=(-c "configure terminal") try
    while IFS= read -r l; do [ -n "$l" ] && args+=(-c "$l"); done <<< "$sextra"
    for try in $(seq 50); do
      ! vty "${args[@]}" | grep -q "% " && break
      sleep 0.2
    done
  fi
  settle 1
  local part=0
  for step in "$@"; do
    if [ "$step" = RESTART ]; then
      kill -9 "$ZPID"; wait "$ZPID" 2>/dev/null || true
      sleep 0.5
      start_zebra
      # staticd reconnects to the new zebra seconds later: wait for 8 s of quiet.
      settle 2 -1 80
      continue
    fi
    local before; before=$(frames)
    kill -USR1 "$rpid"; part=$((part + 1))
    local args=(-c "configure terminal")
    while IFS= read -r l; do [ -n "$l" ] && args+=(-c "$l"); done <<< "$step"
    vty "${args[@]}"
    settle 1 "$before"
  done
  vty -c "show ip route json" > "$OUT/$name.ip-route.json" || true
  vty -c "show mpls table json" > "$OUT/$name.mpls-table.json" || true
  stop_pids $(cat "$W/run/staticd.pid" 2>/dev/null) $(cat "$W/run/zebra.pid" 2>/dev/null) "$rpid"
  stop_pids "${PIDS[@]}"
  PIDS=()   # all stopped: never signal these ids again (they may be reused)
  for f in "$W"/cap.*.bin; do
    local b; b=$(basename "$f"); b=${b#cap.}
    cp "$f" "$OUT/$name.$b"
    python3 "$HERE/fpm_dump.py" "$OUT/$name.$b" > "$OUT/$name.${b%.bin}.txt"
  done
  cp "$W/zebra.log" "$OUT/$name.zebra.log" 2>/dev/null || true
  cp "$W/rec.out" "$OUT/$name.recorder.log"
  echo "recorded $name: $(ls "$OUT" | grep -c "^$name\.")"
}

run() {
  local s=$1
  for nhg in yes no; do
    local n=$s; [ $nhg = no ] && n=$s-nonhg
    case $s in
      a-static) scenario "$n" $nhg "" "" \
        "ip route 192.0.2.0/24 10.0.1.2
ip route 198.51.100.0/24 10.0.0.2
ip route 203.0.113.7/32 10.0.2.2" \
        "no ip route 192.0.2.0/24 10.0.1.2
no ip route 198.51.100.0/24 10.0.0.2
no ip route 203.0.113.7/32 10.0.2.2" ;;
      b-ecmp) scenario "$n" $nhg "" "" \
        "ip route 192.0.2.0/24 10.0.1.2
ip route 192.0.2.0/24 10.0.2.2
ip route 198.51.100.0/24 10.0.1.2
ip route 198.51.100.0/24 10.0.1.3" \
        "no ip route 192.0.2.0/24 10.0.2.2" \
        "no ip route 192.0.2.0/24 10.0.1.2
no ip route 198.51.100.0/24 10.0.1.2
no ip route 198.51.100.0/24 10.0.1.3" ;;
      c-push) scenario "$n" $nhg "" "" \
        "ip route 192.0.2.0/24 10.0.1.2 label 100
ip route 198.51.100.0/24 10.0.1.2 label 100/200
ip route 203.0.113.0/24 10.0.1.2 label 300
ip route 203.0.113.0/24 10.0.2.2 label 301" \
        "no ip route 192.0.2.0/24 10.0.1.2 label 100
no ip route 198.51.100.0/24 10.0.1.2 label 100/200
no ip route 203.0.113.0/24 10.0.1.2 label 300
no ip route 203.0.113.0/24 10.0.2.2 label 301" ;;
      d-lsp) scenario "$n" $nhg "" "" \
        "mpls lsp 100 10.0.1.2 200
mpls lsp 101 10.0.1.2 implicit-null
mpls lsp 102 10.0.1.2 explicit-null
mpls lsp 103 10.0.1.2 500
mpls lsp 103 10.0.2.2 501" \
        "no mpls lsp 103 10.0.2.2" \
        "no mpls lsp 100
no mpls lsp 101
no mpls lsp 102
no mpls lsp 103" ;;
      h-blackhole) scenario "$n" $nhg "" "" \
        "ip route 192.0.2.0/24 blackhole
ip route 198.51.100.0/24 reject
ip route 203.0.113.0/24 Null0" \
        "no ip route 192.0.2.0/24 blackhole
no ip route 198.51.100.0/24 reject
no ip route 203.0.113.0/24 Null0" ;;
      i-replace) scenario "$n" $nhg "" "" \
        "ip route 192.0.2.0/24 10.0.1.2 10" \
        "ip route 192.0.2.0/24 10.0.2.2 1" \
        "no ip route 192.0.2.0/24 10.0.2.2 1" ;;
      g-restart) scenario "$n" $nhg \
        "mpls lsp 100 10.0.1.2 200
mpls lsp 101 10.0.1.2 implicit-null" \
        "ip route 192.0.2.0/24 10.0.1.2
ip route 198.51.100.0/24 10.0.1.2 label 100
ip route 203.0.113.0/24 10.0.1.2
ip route 203.0.113.0/24 10.0.2.2" RESTART ;;
      j-ipv6)
        # IPv6 on the ports for this scenario only (zebra resolves gateways through them).
        for i in 0 1 2; do ip -n "$NS" addr add "2001:db8:$i::1/64" dev "port$i" nodad; done
        scenario "$n" $nhg "" "" \
        "ipv6 route 2001:db8:100::/48 2001:db8:1::2
ipv6 route 2001:db8:200::/48 2001:db8:1::2
ipv6 route 2001:db8:200::/48 2001:db8:2::2
ipv6 route 2001:db8:300::/48 2001:db8:1::2 label 300/301
ipv6 route 2001:db8:400::/48 fe80::2 port1
ipv6 route 2001:db8:600::/48 ::ffff:10.0.1.2 port1 label 600
ipv6 route 2001:db8:601::/48 ::ffff:10.0.1.2 label 601
ipv6 route 2001:db8:700::/48 blackhole
mpls lsp 1000 2001:db8:1::2 2000
mpls lsp 1001 2001:db8:2::2 implicit-null" \
        "no ipv6 route 2001:db8:100::/48 2001:db8:1::2
no ipv6 route 2001:db8:200::/48 2001:db8:2::2
no mpls lsp 1000"
        for i in 0 1 2; do ip -n "$NS" addr del "2001:db8:$i::1/64" dev "port$i"; done ;;
      *) echo "unknown scenario $s" >&2; exit 2 ;;
    esac
  done
}

SCEN=("$@")
[ ${#SCEN[@]} -eq 0 ] && SCEN=(a-static b-ecmp c-push d-lsp h-blackhole i-replace g-restart)
for s in "${SCEN[@]}"; do run "$s"; done
