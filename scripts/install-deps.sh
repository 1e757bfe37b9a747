#!/usr/bin/env bash
# Installs everything the build, the tests and the demo need, from Debian's packages,
# and cargo-deb (scripts/package.sh) with cargo.
# Idempotent: packages already present are not touched, and apt is not run at all when
# nothing is missing; cargo-deb is compiled only when `cargo deb` is not there. The apt
# part must run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  # build: DPDK headers and libraries (pkg-config finds libdpdk), bindgen's libclang
  # (libsystemd-dev: release builds link DPDK's static archives; pkg-config --static asks
  # for -lsystemd through libpcap and dbus)
  libdpdk-dev dpdk dpdk-dev libsystemd-dev pkg-config clang libclang-dev libpcap-dev build-essential
  # FRR: zebra (+ dplane_fpm_nl), staticd, vtysh for the FPM end-to-end test (tests/frr.rs)
  frr
  # test tools: independent decoders and traffic, Linux hosts in namespaces
  tshark python3-scapy iproute2 iputils-ping traceroute tcpdump procps psmisc ethtool
  # metrics oracle: promtool and a Prometheus server
  prometheus curl
  # DPDK examples source (l3fwd for scripts/bench.sh), hugepage/NIC helpers
  dpdk-doc kmod pciutils
  # profiling (scripts/bench/profile.sh; valgrind for the instruction counts of
  # pipeline-ir.sh, worker-ir.sh, ir_asm.py and tools_ir.py)
  linux-perf valgrind
  # container base images without a registry
  debootstrap docker-compose
  # Debian package checks (scripts/package.sh builds with cargo-deb, installed below)
  lintian
)
# cargo-deb: the version installed on a machine without one (any installed one is kept).
CARGO_DEB_VERSION=3.8.0
export PATH="$HOME/.cargo/bin:$PATH"

install_cargo_deb() {
  if cargo deb --version >/dev/null 2>&1; then
    return 0
  fi
  echo "install-deps: installing cargo-deb $CARGO_DEB_VERSION (cargo install, a few minutes)"
  cargo install cargo-deb --locked --version "$CARGO_DEB_VERSION"
}

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  install_cargo_deb
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
install_cargo_deb
