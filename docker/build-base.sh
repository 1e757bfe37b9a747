#!/usr/bin/env bash
# Makes sure a Debian bookworm base image exists for docker/Dockerfile and prints its
# name on stdout (the last line; progress goes to stderr).
#
# Order: an image already present locally -> `docker pull` of the requested base ->
# a local one built with debootstrap and `docker import` (machines with a Debian mirror
# but no registry). The debootstrapped image is cached under its tag: later runs reuse it.
#
#   docker/build-base.sh [--base debian:bookworm-slim] [--local-tag mplsrouter/base:bookworm]
#                        [--mirror URL] [--no-pull] [--force]
#
#   --base IMAGE      the image to look for / pull first (default debian:bookworm-slim)
#   --local-tag TAG   what to call the debootstrapped image (default mplsrouter/base:bookworm)
#   --mirror URL      Debian mirror for debootstrap (default: the host's apt mirror, else
#                     http://deb.debian.org/debian)
#   --no-pull         do not try the registry
#   --force           rebuild the debootstrapped image even if it exists
#
# Needs root (debootstrap) and a Docker engine.
set -euo pipefail

BASE=debian:bookworm-slim
LOCAL_TAG=mplsrouter/base:bookworm
MIRROR=""
PULL=1
FORCE=0
SUITE=bookworm

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --base) BASE="$2"; shift 2 ;;
    --local-tag) LOCAL_TAG="$2"; shift 2 ;;
    --mirror) MIRROR="$2"; shift 2 ;;
    --no-pull) PULL=0; shift ;;
    --force) FORCE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build-base.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { echo "build-base: $*" >&2; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || {
  log "no Docker engine reachable (is dockerd running, may this user use it?)"
  exit 1
}

if [ "$FORCE" = 0 ]; then
  for img in "$BASE" "$LOCAL_TAG"; do
    if have_image "$img"; then
      log "using $img (present locally)"
      echo "$img"
      exit 0
    fi
  done
  if [ "$PULL" = 1 ]; then
    log "pulling $BASE"
    if timeout 120 docker pull -q "$BASE" >&2; then
      echo "$BASE"
      exit 0
    fi
    log "cannot pull $BASE; building $LOCAL_TAG with debootstrap instead"
  fi
fi

command -v debootstrap >/dev/null || {
  log "debootstrap is not installed (apt-get install debootstrap)"
  exit 1
}
[ "$(id -u)" -eq 0 ] || { log "debootstrap needs root"; exit 1; }

if [ -z "$MIRROR" ]; then
  # The host's own Debian mirror is the one we know is reachable.
  MIRROR=$(grep -rhoE '(URIs:|^deb) +https?://[^ ]+/debian/?( |$)' \
      /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
    grep -oE 'https?://[^ ]+' | head -n1 || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
MIRROR=${MIRROR%/}
SECURITY=${MIRROR%/debian}/debian-security

ROOTFS=$(mktemp -d /tmp/mplsrouter-rootfs.XXXXXX)
trap 'rm -rf --one-file-system "$ROOTFS"' EXIT

log "debootstrap $SUITE from $MIRROR (a minute or two)"
debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$MIRROR" >&2

# Same sources as debian:bookworm-slim: point releases and security updates, so the
# DPDK runtime libraries installed later match the host's libdpdk-dev.
cat >"$ROOTFS/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY $SUITE-security main
EOF
# Keep images small the way the official slim images do: no docs, man pages, locales.
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
cat >"$ROOTFS/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT::Install-Recommends "false";
EOF
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/archives/*.deb \
  "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/var/log/*.log
# A container's hostname and resolver come from the engine.
: >"$ROOTFS/etc/hostname"
: >"$ROOTFS/etc/resolv.conf"

log "importing as $LOCAL_TAG"
tar -C "$ROOTFS" --numeric-owner -c . |
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' \
    --message "debian $SUITE minbase from $MIRROR (docker/build-base.sh)" \
    - "$LOCAL_TAG" >&2
echo "$LOCAL_TAG"
