#!/bin/sh
# Entrypoint of the test hosts in docker/compose.yaml: a Linux host on one network whose
# routes to the other networks point at the router.
#
# HOST_MAC      MAC of eth0 (the router's routes file has it as a static neighbor)
# GW, GW_MAC    the router's address on this network and its MAC (a static ARP entry:
#               the topology does not depend on the router answering ARP)
# HOST_ROUTES   prefixes routed via GW
# HOST_LOOPBACK addresses added to lo (networks "behind" this host)
set -eu

dev=eth0
ip link set dev "$dev" address "${HOST_MAC:?}"
ip neigh replace "${GW:?}" lladdr "${GW_MAC:?}" dev "$dev" nud permanent
for p in ${HOST_ROUTES:-}; do
  ip route replace "$p" via "$GW" dev "$dev"
done
for a in ${HOST_LOOPBACK:-}; do
  ip addr replace "$a" dev lo
done
echo "host-entrypoint: $(hostname) ready: mac $HOST_MAC, via $GW ($GW_MAC) to ${HOST_ROUTES:-nothing}"
touch /run/host-ready
exec sleep infinity
