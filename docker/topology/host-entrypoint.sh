#!/bin/sh
# Entrypoint of the test hosts in docker/compose.yaml: a Linux host on one network whose
# routes to the other networks point at the router.
#
# HOST_MAC      MAC of eth0 (fixed, so the router's routes file can name it)
# GW            the router's address on this network
# GW_MAC        if set, a static ARP entry for GW; if empty, the host resolves the router
#               with ARP
# HOST_ROUTES   prefixes routed via GW
# HOST_LOOPBACK addresses added to lo (networks "behind" this host)
set -eu

dev=eth0
: "${GW:?}"
ip link set dev "$dev" address "${HOST_MAC:?}"
if [ -n "${GW_MAC:-}" ]; then
  ip neigh replace "$GW" lladdr "$GW_MAC" dev "$dev" nud permanent
fi
for p in ${HOST_ROUTES:-}; do
  ip route replace "$p" via "$GW" dev "$dev"
done
for a in ${HOST_LOOPBACK:-}; do
  ip addr replace "$a" dev lo
done
echo "host-entrypoint: $(hostname) ready: mac $HOST_MAC, via $GW (${GW_MAC:-ARP}) to ${HOST_ROUTES:-nothing}"
touch /run/host-ready
exec sleep infinity
