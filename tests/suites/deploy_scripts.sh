#!/usr/bin/env bash
# Bare-metal deployment helpers, tested as far as a machine without a spare NIC allows:
#
#  1. scripts/setup-hugepages.sh against a fake sysfs (check, dry run, reserve, sizes,
#     nodes, argument errors);
#  2. the same script for real, in a private mount namespace: reserve a few 2M pages,
#     mount hugetlbfs, run the router on them; the router's error without hugepages;
#     the previous reservation is restored afterwards (SKIP where the kernel refuses);
#  3. scripts/bind-nic.sh against a fake sysfs with `ip`, `dpdk-devbind.py`, `modprobe`
#     and `lspci` stubs: refusal on addresses/routes, --force, --dry-run, no-IOMMU,
#     bind, idempotence, --restore; then a real dry run on this machine's own uplink,
#     which must be refused;
#  4. the shipped configs pass `mplsrouter check`; the router names a missing PCI device.
set -euo pipefail
cd "$(dirname "$0")/../.."

BIN=${MPLSROUTER_BIN:-target/release/mplsrouter}
HP=$PWD/scripts/setup-hugepages.sh
BN=$PWD/scripts/bind-nic.sh
T0=$(date +%s)
say() { printf 'deploy suite [%3ss]: %s\n' "$(($(date +%s) - T0))" "$*"; }
fail() { say "FAIL: $*"; exit 1; }
W=$(mktemp -d /tmp/mplsrouter-deploy-test.XXXXXX)
trap 'rm -rf "$W"' EXIT

# expect STATUS DESCRIPTION -- CMD...: runs CMD, output in $OUT, requires exit STATUS.
OUT=""
expect() {
  local want=$1 what=$2 rc=0
  shift 3
  OUT=$("$@" 2>&1) || rc=$?
  [ "$rc" = "$want" ] || fail "$what: exit $rc, want $want; output:
$OUT"
}
has() { grep -qF -- "$1" <<<"$OUT" || fail "$2: output lacks '$1':
$OUT"; }
lacks() { ! grep -qF -- "$1" <<<"$OUT" || fail "$2: output has '$1':
$OUT"; }

[ -x "$BIN" ] || fail "no binary at $BIN (cargo build --release --bin mplsrouter)"

# --- 1. setup-hugepages.sh on a fake sysfs --------------------------------------------
F=$W/hp
P2=$F/sys/kernel/mm/hugepages/hugepages-2048kB
mkdir -p "$P2" "$F/sys/devices/system/node/node0/hugepages/hugepages-2048kB"
for x in nr_hugepages free_hugepages surplus_hugepages; do echo 0 >"$P2/$x"; done
: >"$F/mounts"
hp() { HUGEPAGES_SYSFS=$F/sys HUGEPAGES_MOUNTS=$F/mounts "$HP" "$@"; }

expect 1 "check, nothing reserved" -- hp --check
has "total 0, free 0" "check"
has "NOT READY: 0 free 2M pages" "check"
has "NOT READY: no hugetlbfs mount" "check"

expect 0 "dry run" -- hp --dry-run --pages 8
has "would write 8 to $P2/nr_hugepages (now 0)" "dry run"
has "would run: mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages" "dry run"
has "vm.nr_hugepages = 8" "dry run: persistence hint"
[ "$(cat "$P2/nr_hugepages")" = 0 ] || fail "dry run wrote nr_hugepages"

# A 2M hugetlbfs is mounted already: reserving writes the pool and mounts nothing.
echo "nodev /mnt/huge hugetlbfs rw,relatime,pagesize=2M 0 0" >"$F/mounts"
if [ "$(id -u)" = 0 ]; then
  expect 0 "reserve (fake)" -- hp --pages 8
  [ "$(cat "$P2/nr_hugepages")" = 8 ] || fail "reserve did not write 8 pages"
  has "already mounted at /mnt/huge" "reserve (fake)"
  lacks "would run" "reserve (fake)"
  expect 0 "reserve again (fake)" -- hp --pages 8
  has "already has 8 pages" "idempotent reserve"
  expect 0 "per-node reserve (fake)" -- hp --node 0 --pages 3
  [ "$(cat "$F/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages")" = 3 ] ||
    fail "--node 0 did not write the node's pool"
  has "NUMA node 0" "per-node reserve"
  has "hugepages=0:3" "per-node persistence hint"
else
  say "SKIP fake reserve: not root"
fi
echo 8 >"$P2/free_hugepages"
expect 0 "check, 8 free and mounted" -- hp --check --pages 8
has "READY: 8 free 2M pages, hugetlbfs mounted" "check ready"
expect 1 "check, asks for more than free" -- hp --check --pages 9
has "need 9" "check short"
# A 1G mount does not count for 2M pages.
echo "nodev /mnt/huge1g hugetlbfs rw,relatime,pagesize=1024M 0 0" >"$F/mounts"
expect 1 "check, only a 1G mount" -- hp --check
has "NOT READY: no hugetlbfs mount with 2M pages" "check mount size"
expect 2 "1G pages unsupported" -- hp --size 1G --check
has "1G pages are not supported" "1G unsupported"
expect 2 "bad size" -- hp --size 3M
expect 2 "bad count" -- hp --pages many
expect 2 "bad option" -- hp --bogus
expect 0 "help" -- hp --help
has "--check" "help"
say "setup-hugepages.sh on a fake sysfs: ok"

# --- 2. hugepages for real, in a private mount namespace ------------------------------
cat >"$W/huge.yaml" <<'EOF'
eal:
  lcores: "0,1"
  memory_mb: 64
  args: [--huge-unlink]
ports:
  - {name: a, vdev: "net_null0,no-rx=1", addresses: [10.0.0.1/24]}
  - {name: b, vdev: "net_null1,no-rx=1", addresses: [10.0.1.1/24]}
idle: {backoff: {}}
EOF
# The same without --huge-unlink: the EAL leaves a file per hugepage, which the router
# must remove when it stops (each one holds its page until deleted).
grep -v -- '--huge-unlink' "$W/huge.yaml" >"$W/huge-files.yaml"
POOL=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
real_hugepages() {
  # Runs inside `unshare -m`: mounts made here vanish with the namespace.
  set -euo pipefail
  local m
  while m=$(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts) && [ -n "$m" ]; do
    umount "$m"
  done
  # No hugetlbfs: the router must fail and say what to do.
  expect 1 "router without hugepages" -- timeout 60 "$BIN" run --config "$W/huge.yaml" \
    --huge --duration 1 --stats-interval 0 --file-prefix deploy-test-nohuge
  has "hugepage" "router without hugepages"
  has "--no-huge" "router without hugepages: hint"
  expect 1 "check before reserving" -- "$HP" --check --pages 64
  expect 0 "reserve 64 pages" -- "$HP" --pages 64
  [ "$(cat "$POOL")" = 64 ] || fail "reserve: pool has $(cat "$POOL") pages, want 64"
  expect 0 "reserve again" -- "$HP" --pages 64
  has "already has 64 pages" "real idempotent reserve"
  has "already mounted" "real idempotent reserve"
  [ "$(awk '$3 == "hugetlbfs"' /proc/mounts | wc -l)" = 1 ] || fail "hugetlbfs mounted twice"
  expect 0 "check after reserving" -- "$HP" --check --pages 64
  expect 0 "router on hugepages" -- timeout 60 "$BIN" run --config "$W/huge.yaml" \
    --huge --duration 1 --stats-interval 0 --file-prefix deploy-test-huge
  has "mbufs not returned to the pool: 0" "router on hugepages"
  lacks "no-huge" "router on hugepages"
  [ "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages)" = 64 ] ||
    fail "router left hugepages allocated after exit"
  expect 0 "router on hugepage files" -- timeout 60 "$BIN" run --config "$W/huge-files.yaml" \
    --huge --duration 1 --stats-interval 0 --file-prefix deploy-test-files
  has "mbufs not returned to the pool: 0" "router on hugepage files"
  m=$(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts)
  left=$(find "$m" -maxdepth 1 -name 'deploy-test-filesmap_*' | wc -l)
  [ "$left" = 0 ] || fail "router left $left hugepage files in $m after exit"
  [ "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages)" = 64 ] ||
    fail "router without --huge-unlink left hugepages allocated after exit"
  expect 0 "release" -- "$HP" --release
  [ "$(cat "$POOL")" = 0 ] || fail "release left $(cat "$POOL") pages"
}
if [ "$(id -u)" != 0 ] || ! [ -w "$POOL" ] || ! unshare -m true 2>/dev/null; then
  say "SKIP real hugepages: needs root, a writable $POOL and unshare -m"
else
  before=$(cat "$POOL")
  # Only when nothing else holds hugepages (the test sets the pool to 64 and back to 0).
  if [ "$before" != 0 ]; then
    say "SKIP real hugepages: $before pages are reserved on this machine; not touching them"
  else
    trap 'echo "$before" >"$POOL" 2>/dev/null || true; rm -rf "$W"' EXIT
    echo 64 >"$POOL"
    got=$(cat "$POOL")
    echo 0 >"$POOL"
    if [ "$got" != 64 ]; then
      say "SKIP real hugepages: the kernel granted $got of 64 pages"
    else
      export -f real_hugepages expect has lacks say fail
      export BIN HP W POOL T0
      unshare -m --propagation private bash -c real_hugepages
      [ "$(cat "$POOL")" = "$before" ] || fail "pool not restored to $before"
      say "hugepages for real: reserve, mount, idempotent, router on 2M pages (its files removed at exit), clear error without, release: ok"
    fi
  fi
fi

# --- 3. bind-nic.sh on a fake sysfs with stubs ----------------------------------------
F=$W/nic
S=$F/sys
PCI=0000:01:00.0
mkdir -p "$S/bus/pci/drivers/ixgbe" "$S/bus/pci/drivers/vfio-pci" "$S/class/net" \
  "$S/kernel/iommu_groups" "$S/module/vfio/parameters" "$F/bin" "$F/ip" "$F/state"
echo 0 >"$S/module/vfio/parameters/enable_unsafe_noiommu_mode"
nic_reset() {
  rm -rf "${S:?}/bus/pci/devices" "$S/class/net/eth9" "$F/state"/* "$S/kernel/iommu_groups"/*
  mkdir -p "$S/bus/pci/devices/$PCI/net/eth9" "$S/class/net/eth9"
  ln -s "$S/bus/pci/drivers/ixgbe" "$S/bus/pci/devices/$PCI/driver"
  ln -s "$S/bus/pci/devices/$PCI" "$S/class/net/eth9/device"
  : >"$F/ip/eth9.addr"; : >"$F/ip/eth9.route4"; : >"$F/ip/eth9.route6"
  : >"$F/devbind.log"; : >"$F/modprobe.log"
  echo 0 >"$S/module/vfio/parameters/enable_unsafe_noiommu_mode"
}
cat >"$F/bin/ip" <<EOF
#!/bin/sh
# ip -o addr show dev X | ip -4|-6 route show dev X, from files under $F/ip
for dev; do :; done
case "\$*" in
  *"addr show dev"*) cat "$F/ip/\$dev.addr" ;;
  "-4 route show dev"*) cat "$F/ip/\$dev.route4" ;;
  "-6 route show dev"*) cat "$F/ip/\$dev.route6" ;;
  *) echo "ip stub: unexpected \$*" >&2; exit 1 ;;
esac
EOF
cat >"$F/bin/dpdk-devbind.py" <<EOF
#!/bin/sh
# Records its arguments; -b DRV ADDR rebinds the fake device (and the netdev goes away
# from the kernel's view while a DPDK driver holds it).
echo "\$*" >>"$F/devbind.log"
[ "\$1" = -b ] || exit 0
drv=\$2; for addr; do :; done
ln -sfn "$S/bus/pci/drivers/\$drv" "$S/bus/pci/devices/\$addr/driver"
EOF
cat >"$F/bin/modprobe" <<EOF
#!/bin/sh
echo "\$*" >>"$F/modprobe.log"
EOF
cat >"$F/bin/lspci" <<'EOF'
#!/bin/sh
echo "01:00.0 Ethernet controller: Intel Corporation 82599ES 10-Gigabit SFI/SFP+"
echo "	Kernel modules: ixgbe"
EOF
chmod +x "$F/bin"/*
bn() { PATH="$F/bin:$PATH" BIND_NIC_SYSFS=$S BIND_NIC_STATE=$F/state "$BN" "$@"; }
driver() { basename "$(readlink -f "$S/bus/pci/devices/$PCI/driver")"; }
devbind_calls() { grep -c . "$F/devbind.log" || true; }

nic_reset
echo "7: eth9    inet 10.9.0.1/24 brd 10.9.0.255 scope global eth9\       valid_lft forever preferred_lft forever" >"$F/ip/eth9.addr"
echo "10.9.0.0/24 proto kernel scope link src 10.9.0.1" >"$F/ip/eth9.route4"
expect 1 "bind an interface with an address" -- bn --noiommu eth9
has "refusing to unbind $PCI (eth9)" "refusal"
has "addresses 10.9.0.1/24" "refusal names the address"
has "routes 10.9.0.0/24" "refusal names the route"
has "--force" "refusal hint"
[ "$(devbind_calls)" = 0 ] && [ "$(driver)" = ixgbe ] || fail "refused bind still called dpdk-devbind.py"
[ ! -s "$F/modprobe.log" ] || fail "refused bind loaded modules"

: >"$F/ip/eth9.addr"
echo "default via 10.9.0.254 dev eth9" >"$F/ip/eth9.route4"
expect 1 "bind an interface with only a route" -- bn --noiommu 01:00.0
has "routes default" "route-only refusal"

# Link-local IPv6 does not count as "in use".
echo "7: eth9    inet6 fe80::1/64 scope link \       valid_lft forever preferred_lft forever" >"$F/ip/eth9.addr"
: >"$F/ip/eth9.route4"
printf 'fe80::/64 proto kernel metric 256 pref medium\nmulticast ff00::/8 table local proto kernel metric 256 pref medium\n' >"$F/ip/eth9.route6"
expect 0 "dry run on an unused interface" -- bn --dry-run --noiommu eth9
has "would run: modprobe vfio enable_unsafe_noiommu_mode=1" "dry run"
has "would run: modprobe vfio-pci" "dry run"
has "would run: dpdk-devbind.py -b vfio-pci $PCI" "dry run"
[ "$(devbind_calls)" = 0 ] && [ "$(driver)" = ixgbe ] || fail "dry run changed the binding"
[ -z "$(ls -A "$F/state")" ] || fail "dry run wrote state"

expect 1 "vfio-pci without an IOMMU" -- bn eth9
has "no IOMMU groups" "no IOMMU"
has "--noiommu" "no IOMMU hint"
[ "$(devbind_calls)" = 0 ] || fail "bind without IOMMU called dpdk-devbind.py"

expect 0 "bind with --noiommu" -- bn --noiommu eth9
[ "$(driver)" = vfio-pci ] || fail "after bind the driver is $(driver)"
grep -qx "vfio enable_unsafe_noiommu_mode=1" "$F/modprobe.log" && grep -qx "vfio-pci" "$F/modprobe.log" ||
  fail "modules not loaded: $(cat "$F/modprobe.log")"
[ "$(cat "$S/module/vfio/parameters/enable_unsafe_noiommu_mode")" = 1 ] || fail "no-IOMMU mode not enabled"
[ "$(cat "$F/devbind.log")" = "-b vfio-pci $PCI" ] || fail "devbind called with: $(cat "$F/devbind.log")"
[ "$(cat "$F/state/$PCI.driver")" = ixgbe ] || fail "original driver not remembered"

expect 0 "bind again" -- bn --noiommu $PCI
has "already bound to vfio-pci" "idempotent bind"
[ "$(devbind_calls)" = 1 ] || fail "second bind called dpdk-devbind.py again"

expect 0 "restore" -- bn --restore 01:00.0
[ "$(driver)" = ixgbe ] || fail "restore left driver $(driver)"
[ "$(tail -n1 "$F/devbind.log")" = "-b ixgbe $PCI" ] || fail "restore called: $(tail -n1 "$F/devbind.log")"
[ ! -e "$F/state/$PCI.driver" ] || fail "restore kept the state file"

# With an IOMMU, no-IOMMU mode stays off; with --force, an address does not stop it.
nic_reset
mkdir -p "$S/kernel/iommu_groups/12"
echo "7: eth9    inet 10.9.0.1/24 scope global eth9" >"$F/ip/eth9.addr"
expect 0 "bind --force" -- bn --force eth9
has "--force: unbinding $PCI although it is in use" "forced bind warns"
[ "$(cat "$F/devbind.log")" = "-b vfio-pci --force $PCI" ] || fail "forced bind called: $(cat "$F/devbind.log")"
[ "$(cat "$S/module/vfio/parameters/enable_unsafe_noiommu_mode")" = 0 ] ||
  fail "no-IOMMU mode enabled although not asked"
# Restore with no remembered driver: lspci's kernel module.
rm -f "$F/state"/*
expect 0 "restore via lspci" -- bn --restore $PCI
[ "$(driver)" = ixgbe ] || fail "restore via lspci left driver $(driver)"
expect 1 "unknown device" -- bn --dry-run 0000:7f:00.0
has "no such network interface or PCI device" "unknown device"
expect 2 "no device" -- bn --dry-run
expect 2 "bad driver" -- bn --driver e1000 eth9
say "bind-nic.sh on a fake sysfs: refusal, dry run, no-IOMMU, bind, idempotence, force, restore: ok"

# The real uplink: refused even as a dry run, nothing changed.
up=$(ip -4 route show default 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "dev") print $(i+1); exit}')
if [ -n "$up" ] && [ -e "/sys/class/net/$up/device" ] && command -v dpdk-devbind.py >/dev/null; then
  expect 1 "dry run on this machine's uplink $up" -- "$BN" --dry-run --noiommu "$up"
  has "refusing to unbind" "real uplink"
  has "($up)" "real uplink"
  say "bind-nic.sh refuses this machine's uplink $up: ok"
else
  say "SKIP real uplink refusal: no PCI-backed default-route interface or no dpdk-devbind.py"
fi

# --- 4. shipped configs and device errors ---------------------------------------------
for f in dpdk-config/baremetal.example.yaml dpdk-config/docker-*.yaml; do
  expect 0 "mplsrouter check $f" -- "$BIN" check "$f"
done
# The example's queues must all be polled: dropping a worker has to be an error.
grep -v 'lcore: 5' dpdk-config/baremetal.example.yaml >"$W/bad.yaml"
expect 1 "check the example without its last worker" -- "$BIN" check "$W/bad.yaml"
has "polled by no worker" "example without a worker"

cat >"$W/nodev.yaml" <<'EOF'
eal: {lcores: "0,1", no_huge: true, memory_mb: 256}
ports:
  - {name: uplink, pci: "0000:7f:1f.7", addresses: [10.0.0.1/24]}
  - {name: sink, vdev: "net_null0,no-rx=1", addresses: [10.0.1.1/24]}
idle: {backoff: {}}
EOF
expect 1 "router with a missing PCI device" -- timeout 60 "$BIN" run --config "$W/nodev.yaml" \
  --duration 1 --stats-interval 0 --file-prefix deploy-test-nodev
has 'port "uplink"' "missing device error names the port"
has "0000:7f:1f.7" "missing device error names the PCI address"
say "configs check; missing device named: ok"
say "PASS ($(($(date +%s) - T0))s)"
