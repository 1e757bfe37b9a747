#!/usr/bin/env bash
# Installs everything the build, the tests and the demo need, from Debian's packages.
# Idempotent: packages already present are not touched, and apt is not run at all when
# nothing is missing. Must run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  # build: DPDK headers and libraries (pkg-config finds libdpdk), bindgen's libclang
  libdpdk-dev dpdk dpdk-dev pkg-config clang libclang-dev libpcap-dev build-essential
  # FRR: zebra (+ dplane_fpm_nl), staticd, vtysh for the FPM end-to-end test (tests/frr.rs)
  frr
  # test tools: independent decoders and traffic, Linux hosts in namespaces
  tshark python3-scapy iproute2 iputils-ping traceroute tcpdump procps psmisc ethtool
  # metrics oracle: promtool and a Prometheus server
  prometheus curl
  # DPDK examples source (l3fwd for scripts/bench.sh), hugepage/NIC helpers
  dpdk-doc kmod pciutils
  # profiling (scripts/bench/profile.sh)
  linux-perf
  # container base images without a registry
  debootstrap docker-compose
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (missing: ${missing[*]})" >&2; exit 1; }
  SUDO=sudo
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
