#!/bin/sh
# Entrypoint of the router container in docker/compose.yaml: prepares the interfaces
# Docker attached for net_af_packet, then runs mplsrouter with the container's command.
#
# ROUTER_PORTS="NAME=ADDRESS=MAC ...": the interface Docker gave ADDRESS is renamed NAME
# (Docker does not promise which network becomes eth0), gets MAC (the `mac:` of that port
# in the startup config), loses its kernel addresses (the kernel must not answer ARP or
# ICMP for the router's addresses: the router does) and is brought up.
set -eu

for spec in ${ROUTER_PORTS:?set ROUTER_PORTS=NAME=ADDRESS=MAC ...}; do
  name=${spec%%=*}
  rest=${spec#*=}
  addr=${rest%%=*}
  mac=${rest#*=}
  dev=$(ip -o -4 addr show | awk -v a="$addr" '{ split($4, p, "/"); if (p[1] == a) print $2 }')
  if [ -z "$dev" ]; then
    if ip link show dev "$name" >/dev/null 2>&1; then
      dev=$name # already prepared (container restarted)
    else
      echo "router-entrypoint: no interface carries $addr; interfaces:" >&2
      ip -o addr show >&2
      exit 1
    fi
  fi
  ip link set dev "$dev" down
  [ "$dev" = "$name" ] || ip link set dev "$dev" name "$name"
  ip link set dev "$name" address "$mac"
  ip addr flush dev "$name"
  ip link set dev "$name" up
  echo "router-entrypoint: $name (was $dev) mac $mac, kernel addresses removed"
done

exec /usr/bin/mplsrouter "$@"
