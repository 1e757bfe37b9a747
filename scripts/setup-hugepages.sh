#!/usr/bin/env bash
# Reserves hugepages for DPDK and mounts hugetlbfs, or reports whether they are ready.
#
#   scripts/setup-hugepages.sh [--pages N] [--size 2M|1G] [--node N] [--mount DIR] [--dry-run]
#   scripts/setup-hugepages.sh --check [--pages N] [--size 2M|1G] [--node N]
#   scripts/setup-hugepages.sh --release [--size 2M|1G] [--node N]
#
#   --pages N    pages to reserve (default 1024 of 2M = 2 GiB; 1G pages: default 4)
#   --size S     2M (default) or 1G
#   --node N     reserve on NUMA node N only (default: the system-wide pool)
#   --mount DIR  hugetlbfs mount point (default /dev/hugepages for 2M,
#                /dev/hugepages-1G for 1G)
#   --dry-run    print what would be written and mounted, change nothing
#   --check      report the state; exit 0 when at least N (default 1) pages of that size
#                are free and a hugetlbfs of that size is mounted, else 1
#   --release    set the pool to 0 pages (pages in use stay until freed)
#
# Idempotent: the pool is set to exactly N pages (a no-op when it already has N) and
# hugetlbfs is mounted only when no mount of that page size exists. The kernel may
# grant fewer pages than asked when memory is fragmented; the script then says so and
# exits 3. Exit status 2: usage error or not root. Nothing it does survives a reboot:
# it prints how to make the reservation persistent.
#
# For tests: HUGEPAGES_SYSFS (default /sys) and HUGEPAGES_MOUNTS (default /proc/mounts)
# point the script at another tree.
set -euo pipefail

SYSFS=${HUGEPAGES_SYSFS:-/sys}
MOUNTS=${HUGEPAGES_MOUNTS:-/proc/mounts}
PAGES=""
SIZE=2M
NODE=""
MOUNT=""
MODE=reserve
DRY=0

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "setup-hugepages: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --pages) PAGES="${2:-}"; shift 2 ;;
    --size) SIZE="${2:-}"; shift 2 ;;
    --node) NODE="${2:-}"; shift 2 ;;
    --mount) MOUNT="${2:-}"; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    --check) MODE=check; shift ;;
    --release) MODE=release; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

case "$SIZE" in
  2M|2m|2048k|2048kB) SIZE=2M; KB=2048 ;;
  1G|1g|1048576k|1048576kB) SIZE=1G; KB=1048576 ;;
  *) die "--size must be 2M or 1G, not '$SIZE'" ;;
esac
if [ -n "$PAGES" ] && ! [[ "$PAGES" =~ ^[0-9]+$ ]]; then
  die "--pages must be a number of pages, not '$PAGES'"
fi
if [ -n "$NODE" ] && ! [[ "$NODE" =~ ^[0-9]+$ ]]; then
  die "--node must be a NUMA node number, not '$NODE'"
fi
MOUNT=${MOUNT:-$([ "$SIZE" = 2M ] && echo /dev/hugepages || echo /dev/hugepages-1G)}

if [ -n "$NODE" ]; then
  POOL="$SYSFS/devices/system/node/node$NODE/hugepages/hugepages-${KB}kB"
  WHERE="NUMA node $NODE"
else
  POOL="$SYSFS/kernel/mm/hugepages/hugepages-${KB}kB"
  WHERE="the system"
fi
[ -d "$POOL" ] || {
  echo "setup-hugepages: $SIZE pages are not supported on $WHERE ($POOL missing)" >&2
  [ "$SIZE" = 1G ] && echo "  the CPU needs the pdpe1gb flag; use --size 2M" >&2
  exit 2
}

read_pool() { cat "$POOL/$1" 2>/dev/null || echo 0; }
# Mount points of hugetlbfs with this page size ("pagesize=2M" or "pagesize=1024M";
# a mount without the option uses the default size, which /proc/meminfo reports).
mounts_of_size() {
  local default_kb
  default_kb=$(awk '/^Hugepagesize:/ {print $2}' /proc/meminfo 2>/dev/null || echo 2048)
  awk -v kb="$KB" -v dkb="$default_kb" '
    $3 == "hugetlbfs" {
      ps = dkb
      n = split($4, o, ",")
      for (i = 1; i <= n; i++) if (o[i] ~ /^pagesize=/) {
        v = substr(o[i], 10); u = substr(v, length(v)); v = substr(v, 1, length(v) - 1)
        ps = (u == "G") ? v * 1048576 : (u == "M") ? v * 1024 : (u == "K" ? v : v / 1024)
      }
      if (ps == kb) print $2
    }' "$MOUNTS"
}

report() {
  local total free surplus mnts
  total=$(read_pool nr_hugepages)
  free=$(read_pool free_hugepages)
  surplus=$(read_pool surplus_hugepages)
  mnts=$(mounts_of_size | tr '\n' ' ')
  echo "hugepages $SIZE on $WHERE: total $total, free $free, surplus $surplus"
  echo "hugetlbfs ($SIZE): ${mnts:-not mounted}"
}

persist_hint() {
  local n=$1
  echo
  echo "Not persistent. To reserve at every boot:"
  if [ "$SIZE" = 2M ] && [ -z "$NODE" ]; then
    echo "  echo 'vm.nr_hugepages = $n' > /etc/sysctl.d/80-mplsrouter-hugepages.conf"
    echo "  (or on the kernel command line: hugepagesz=2M hugepages=$n)"
  elif [ "$SIZE" = 2M ]; then
    echo "  a boot-time unit/rc.local line: echo $n > $POOL/nr_hugepages"
    echo "  (or on the kernel command line: hugepagesz=2M hugepages=$NODE:$n)"
  else
    echo "  kernel command line (1G pages are only reliable at boot):"
    echo "    default_hugepagesz=1G hugepagesz=1G hugepages=${NODE:+$NODE:}$n"
    echo "  e.g. in /etc/default/grub GRUB_CMDLINE_LINUX, then update-grub and reboot"
  fi
  if [ "$MOUNT" = /dev/hugepages ]; then
    echo "  systemd mounts /dev/hugepages at boot (dev-hugepages.mount); elsewhere add to /etc/fstab:"
  else
    echo "  /etc/fstab:"
  fi
  echo "    nodev $MOUNT hugetlbfs pagesize=$SIZE 0 0"
}

if [ "$MODE" = check ]; then
  need=${PAGES:-1}
  report
  free=$(read_pool free_hugepages)
  ok=1
  if [ "$free" -lt "$need" ]; then
    echo "NOT READY: $free free $SIZE pages, need $need (scripts/setup-hugepages.sh --pages N)"
    ok=0
  fi
  if [ -z "$(mounts_of_size)" ]; then
    echo "NOT READY: no hugetlbfs mount with $SIZE pages (scripts/setup-hugepages.sh mounts one)"
    ok=0
  fi
  if [ "$ok" = 1 ]; then
    echo "READY: $free free $SIZE pages, hugetlbfs mounted"
    exit 0
  fi
  exit 1
fi

if [ "$MODE" = release ]; then
  PAGES=0
fi
PAGES=${PAGES:-$([ "$SIZE" = 2M ] && echo 1024 || echo 4)}

if [ "$DRY" = 0 ] && [ "$(id -u)" -ne 0 ]; then
  die "must run as root to change $POOL/nr_hugepages (or use --dry-run / --check)"
fi
run() {
  if [ "$DRY" = 1 ]; then
    echo "would run: $*"
  else
    "$@"
  fi
}

before=$(read_pool nr_hugepages)
if [ "$before" = "$PAGES" ]; then
  echo "$SIZE pool on $WHERE already has $PAGES pages"
else
  if [ "$DRY" = 1 ]; then
    echo "would write $PAGES to $POOL/nr_hugepages (now $before)"
  else
    echo "$PAGES" >"$POOL/nr_hugepages"
  fi
fi
if [ "$DRY" = 0 ]; then
  got=$(read_pool nr_hugepages)
  if [ "$got" -lt "$PAGES" ]; then
    report
    echo "setup-hugepages: asked for $PAGES $SIZE pages, the kernel granted $got" >&2
    echo "  memory is fragmented or short: reserve at boot (see below) or ask for fewer" >&2
    persist_hint "$PAGES" >&2
    exit 3
  fi
fi

if [ "$MODE" = reserve ]; then
  if [ -n "$(mounts_of_size)" ]; then
    echo "hugetlbfs ($SIZE) already mounted at $(mounts_of_size | head -n1)"
  else
    run mkdir -p "$MOUNT"
    run mount -t hugetlbfs -o "pagesize=$SIZE" nodev "$MOUNT"
  fi
fi

if [ "$DRY" = 0 ]; then
  report
fi
if [ "$MODE" = reserve ] && [ "$PAGES" -gt 0 ]; then
  persist_hint "$PAGES"
fi
