#!/usr/bin/env bash
# Hands a NIC to DPDK (vfio-pci) or gives it back to its kernel driver; a careful wrapper
# around dpdk-devbind.py (Debian package `dpdk`).
#
#   scripts/bind-nic.sh [--driver vfio-pci] [--noiommu] [--force] [--dry-run] DEVICE...
#   scripts/bind-nic.sh --restore [--kernel-driver DRV] [--dry-run] DEVICE...
#   scripts/bind-nic.sh --status
#
#   DEVICE            a PCI address (0000:01:00.0 or 01:00.0) or a kernel interface (eth1)
#   --driver D        vfio-pci (default) or uio_pci_generic
#   --noiommu         enable VFIO's unsafe no-IOMMU mode (only for machines or VMs
#                     without an IOMMU; DMA is then not isolated)
#   --force           unbind even when the interface carries addresses or routes
#   --dry-run         check everything, print the commands, change nothing
#   --restore         bind back to the kernel driver it had before (remembered in the
#                     state directory), or --kernel-driver DRV, or lspci's suggestion
#   --status          dpdk-devbind.py --status-dev net
#
# Refuses (exit 1) to take an interface that has IPv4/IPv6 addresses (other than
# link-local) or routes, unless --force: that is how machines lose their management
# network. Exit 2: usage error or not root.
#
# Environment (tests): BIND_NIC_SYSFS (default /sys), BIND_NIC_STATE (default
# /var/lib/mplsrouter/bind-nic), DPDK_DEVBIND (default dpdk-devbind.py).
set -euo pipefail

SYSFS=${BIND_NIC_SYSFS:-/sys}
STATE=${BIND_NIC_STATE:-/var/lib/mplsrouter/bind-nic}
DEVBIND=${DPDK_DEVBIND:-dpdk-devbind.py}
DRIVER=vfio-pci
NOIOMMU=0
FORCE=0
DRY=0
MODE=bind
KDRIVER=""
DEVICES=()

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "bind-nic: $*" >&2; exit 2; }
refuse() { echo "bind-nic: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --driver) DRIVER="${2:-}"; shift 2 ;;
    --noiommu) NOIOMMU=1; shift ;;
    --force) FORCE=1; shift ;;
    --dry-run) DRY=1; shift ;;
    --restore) MODE=restore; shift ;;
    --kernel-driver) KDRIVER="${2:-}"; shift 2 ;;
    --status) MODE=status; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) DEVICES+=("$1"); shift ;;
  esac
done

command -v "$DEVBIND" >/dev/null || die "$DEVBIND not found (apt-get install dpdk)"
if [ "$MODE" = status ]; then
  exec "$DEVBIND" --status-dev net
fi
[ ${#DEVICES[@]} -gt 0 ] || die "name at least one device (PCI address or interface); see --help"
case "$DRIVER" in vfio-pci|uio_pci_generic) ;; *) die "--driver must be vfio-pci or uio_pci_generic" ;; esac
if [ "$DRY" = 0 ] && [ "$(id -u)" -ne 0 ]; then
  die "must run as root (or use --dry-run)"
fi

run() {
  if [ "$DRY" = 1 ]; then
    echo "would run: $*"
  else
    echo "+ $*"
    "$@"
  fi
}

# PCI address of DEVICE (interface name, full or short PCI address).
resolve() {
  local d=$1 p
  if [ -e "$SYSFS/class/net/$d/device" ]; then
    p=$(readlink -f "$SYSFS/class/net/$d/device")
    # virtio and similar: the netdev hangs off a child of the PCI function.
    [[ "$(basename "$p")" =~ ^[0-9a-f]{4}: ]] || p=$(dirname "$p")
    basename "$p"
    return
  fi
  [[ "$d" =~ ^[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$ ]] && d="0000:$d"
  d=${d,,}
  if [[ "$d" =~ ^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$ ]] && [ -d "$SYSFS/bus/pci/devices/$d" ]; then
    echo "$d"
    return
  fi
  refuse "no such network interface or PCI device: $1 (see: $0 --status)"
}

driver_of() {
  local l="$SYSFS/bus/pci/devices/$1/driver"
  if [ -e "$l" ]; then basename "$(readlink -f "$l")"; fi
}

ifaces_of() {
  local dev="$SYSFS/bus/pci/devices/$1" n
  for n in "$dev"/net/* "$dev"/virtio*/net/*; do
    [ -e "$n" ] && basename "$n"
  done
  return 0
}

# Addresses and routes that make an interface "in use"; empty when it is safe to take.
usage_of() {
  local ifc=$1 addrs routes
  addrs=$(ip -o addr show dev "$ifc" 2>/dev/null |
    awk '$3 == "inet" || ($3 == "inet6" && $4 !~ /^fe80:/) {print $4}' | tr '\n' ' ')
  routes=$( { ip -4 route show dev "$ifc" 2>/dev/null
              ip -6 route show dev "$ifc" 2>/dev/null | grep -Ev '^(fe80::/64|multicast|ff00::/8)'; } |
    awk '{print $1}' | tr '\n' ' ')
  [ -z "$addrs" ] || printf 'addresses %s' "$addrs"
  [ -z "$addrs" ] || [ -z "$routes" ] || printf '; '
  [ -z "$routes" ] || printf 'routes %s' "$routes"
}

state_file() { echo "$STATE/$1.driver"; }

bind_one() {
  local pci=$1 cur ifc use busy=""
  cur=$(driver_of "$pci")
  if [ "$cur" = "$DRIVER" ]; then
    echo "$pci: already bound to $DRIVER"
    return
  fi
  for ifc in $(ifaces_of "$pci"); do
    use=$(usage_of "$ifc")
    [ -z "$use" ] || busy+="  $ifc: $use"$'\n'
  done
  if [ -n "$busy" ]; then
    if [ "$FORCE" = 0 ]; then
      refuse "refusing to unbind $pci from ${cur:-its driver}: it is in use
$busy  Taking it away drops these addresses and routes (maybe your SSH session).
  Remove them first (ip addr flush dev IFACE) or pass --force."
    fi
    echo "bind-nic: --force: unbinding $pci although it is in use:"$'\n'"$busy" >&2
  fi
  if [ -n "$cur" ]; then
    if [ "$DRY" = 1 ]; then
      echo "would remember $pci's driver $cur in $(state_file "$pci")"
    else
      mkdir -p "$STATE"
      echo "$cur" >"$(state_file "$pci")"
    fi
  fi
  local args=(-b "$DRIVER")
  [ "$FORCE" = 1 ] && args+=(--force)
  run "$DEVBIND" "${args[@]}" "$pci"
  if [ "$DRY" = 0 ]; then
    cur=$(driver_of "$pci")
    [ "$cur" = "$DRIVER" ] || refuse "$pci is bound to '${cur:-nothing}', not $DRIVER, after $DEVBIND"
    echo "$pci: bound to $DRIVER (restore: $0 --restore $pci)"
  fi
}

restore_one() {
  local pci=$1 cur drv=$KDRIVER f
  f=$(state_file "$pci")
  [ -n "$drv" ] || { [ -f "$f" ] && drv=$(cat "$f"); } || true
  if [ -z "$drv" ] && command -v lspci >/dev/null; then
    drv=$(lspci -k -s "$pci" 2>/dev/null | sed -nE 's/^\s*Kernel modules: *([^ ,]+).*/\1/p' | head -n1)
  fi
  [ -n "$drv" ] || refuse "$pci: do not know its kernel driver; pass --kernel-driver DRV"
  cur=$(driver_of "$pci")
  if [ "$cur" = "$drv" ]; then
    echo "$pci: already bound to $drv"
  else
    run "$DEVBIND" -b "$drv" "$pci"
    if [ "$DRY" = 0 ]; then
      cur=$(driver_of "$pci")
      [ "$cur" = "$drv" ] || refuse "$pci is bound to '${cur:-nothing}', not $drv, after $DEVBIND"
      echo "$pci: back on $drv"
    fi
  fi
  if [ -f "$f" ]; then run rm -f "$f"; fi
}

PCIS=()
for d in "${DEVICES[@]}"; do
  PCIS+=("$(resolve "$d")")
done

if [ "$MODE" = restore ]; then
  for p in "${PCIS[@]}"; do restore_one "$p"; done
  exit 0
fi

# Check every device before touching any.
if [ "$FORCE" = 0 ]; then
  for p in "${PCIS[@]}"; do
    for ifc in $(ifaces_of "$p"); do
      use=$(usage_of "$ifc")
      [ -z "$use" ] || refuse "refusing to unbind $p ($ifc): it carries $use
  Taking it away drops these addresses and routes (maybe your SSH session).
  Remove them first (ip addr flush dev $ifc) or pass --force."
    done
  done
fi

if [ "$DRIVER" = vfio-pci ]; then
  if [ "$NOIOMMU" = 1 ]; then
    run modprobe vfio enable_unsafe_noiommu_mode=1
    param="$SYSFS/module/vfio/parameters/enable_unsafe_noiommu_mode"
    if [ "$DRY" = 1 ]; then
      echo "would write 1 to $param"
    elif [ -e "$param" ]; then
      echo 1 >"$param"
    fi
  elif [ -z "$(ls -A "$SYSFS/kernel/iommu_groups" 2>/dev/null)" ]; then
    refuse "no IOMMU groups: vfio-pci needs an IOMMU. Enable VT-d/AMD-Vi in the firmware and
  boot with intel_iommu=on iommu=pt (Intel), or pass --noiommu (unsafe: no DMA isolation;
  for VMs without a virtual IOMMU)."
  fi
  run modprobe vfio-pci
else
  run modprobe "$DRIVER"
fi

for p in "${PCIS[@]}"; do bind_one "$p"; done
