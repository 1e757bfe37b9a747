#!/usr/bin/env bash
# Package suite: the Debian package installs, works, removes and purges like a daemon's.
#
#  1. scripts/package.sh --no-build (target/release/mplsrouter) and lintian on the .deb
#     (errors and warnings fail; the overrides shipped in the package say why each
#     remaining tag is accepted);
#  2. a clean container from the debootstrap base image (docker/build-base.sh, shared
#     with the docker suite and cached), with the base image's no-docs/no-man dpkg filter
#     removed so it installs like a bare-metal box; apt installs the .deb and its
#     dependencies from the Debian mirror, then:
#     - `mplsrouter --version`, `man mplsrouter-check`, completions in place,
#       `mplsrouter check /etc/mplsrouter/startup.yaml`, both conffiles registered, the
#       unit passes `systemd-analyze verify` and is enabled, no maintainer script starts
#       it or touches hugepages or NICs, and no router runs;
#     - the demo: `gen-traffic demo` and the packaged examples/demo.yaml on vdevs with
#       --no-huge for a few seconds; it must forward and stop cleanly;
#  3. remove: binary gone, conffiles (with a local edit) stay; reinstall keeps the edit;
#     purge: /etc/mplsrouter and the enablement link go; reinstall: pristine conffiles.
#  The container is removed on any exit. Skipped, with a message, only when no Docker
#  engine is reachable. MPLSROUTER_PACKAGE_TIMEOUT: whole-suite limit (default 300 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"

LIMIT=${MPLSROUTER_PACKAGE_TIMEOUT:-300}
T0=$(date +%s)
say() { printf 'package suite [%4ss]: %s\n' "$(($(date +%s) - T0))" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

if [ -z "${MPLSROUTER_PACKAGE_SUITE_CHILD:-}" ]; then
  export MPLSROUTER_PACKAGE_SUITE_CHILD=1
  rc=0
  timeout -k 20 "$LIMIT" bash "$0" "$@" || rc=$?
  [ "$rc" = 124 ] && say "FAIL: exceeded ${LIMIT}s (MPLSROUTER_PACKAGE_TIMEOUT)"
  exit "$rc"
fi

# --- 1. package and lintian -------------------------------------------------------------
t=$(date +%s)
DEB=$(scripts/package.sh --no-build | tail -n1) || fail "scripts/package.sh failed"
say "built $DEB ($(($(date +%s) - t))s)"
# DPDK is inside the binary: dpkg-shlibdeps names what its PMDs link (libpcap for
# net_pcap), and no librte-* package is depended on or recommended.
deps="$(dpkg-deb -f "$DEB" Depends) $(dpkg-deb -f "$DEB" Recommends)"
grep -q 'libpcap0.8' <<<"$deps" ||
  fail "Depends has no libpcap0.8 (dpkg-shlibdeps did not run?): $deps"
! grep -q 'librte-' <<<"$deps" || fail "the package depends on DPDK's shared libraries: $deps"
command -v lintian >/dev/null || fail "lintian is not installed (scripts/install-deps.sh)"
# lintian takes most of a minute of CPU: it runs while the container installs (network).
LINT=$(mktemp /tmp/mplsrouter-lintian.XXXXXX)
lint_t0=$(date +%s)
lintian --allow-root --fail-on error,warning --display-info "$DEB" >"$LINT" 2>&1 &
LINT_PID=$!
cleanup() {
  if [ -n "${NAME:-}" ]; then docker rm -f "$NAME" >/dev/null 2>&1 || true; fi
  kill "$LINT_PID" 2>/dev/null || true
  rm -f "$LINT"
}
trap cleanup EXIT
lintian_result() {
  local rc=0
  wait "$LINT_PID" || rc=$?
  sed 's/^/    lintian: /' "$LINT"
  [ "$rc" = 0 ] || fail "lintian found errors or warnings (above; exit status $rc)"
  say "lintian: no errors or warnings (info tags above; overrides in packaging/lintian-overrides) ($(($(date +%s) - lint_t0))s)"
}

if ! timeout 20 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
  lintian_result
  say "SKIP: no Docker engine reachable; install/remove/purge not tested"
  exit 0
fi

# --- 2. install into a clean container ----------------------------------------------------
BASE=$(docker/build-base.sh | tail -n1) || fail "no base image (docker/build-base.sh)"
NAME=mplsrouter-pkg-$$
docker run -d --name "$NAME" -v "$(realpath "$DEB"):/tmp/mplsrouter.deb:ro" \
  "$BASE" sleep 600 >/dev/null || fail "cannot start a container from $BASE"
# inside CMD: run a shell snippet in the container, its output indented
inside() { docker exec "$NAME" bash -ec "$1" 2>&1 | sed 's/^/    /'; return "${PIPESTATUS[0]}"; }
# quiet CMD: the same, output shown only on failure
quiet() {
  local out
  out=$(docker exec "$NAME" bash -ec "$1" 2>&1) || { printf '%s\n' "$out" | tail -n 30; return 1; }
}
APT="DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dpkg::Use-Pty=0"

t=$(date +%s)
# man-db for `man`, systemd for `systemd-analyze verify` and `systemctl is-enabled`
# (installed, not running: nothing in a container boots it).
quiet "rm /etc/dpkg/dpkg.cfg.d/docker-slim; $APT update; $APT install --no-install-recommends man-db systemd" ||
  fail "apt-get update / man-db, systemd in the container"
say "container $NAME from $BASE ready ($(($(date +%s) - t))s)"
t=$(date +%s)
# Recommends too, as apt does by default on a real box.
quiet "$APT install --install-recommends /tmp/mplsrouter.deb" || fail "apt-get install of the package"
say "installed with its dependencies ($(($(date +%s) - t))s)"

inside 'mplsrouter --version' || fail "mplsrouter --version"
inside 'MANPAGER=cat MANWIDTH=80 man mplsrouter-check | grep -m1 -A1 "^NAME"' || fail "man mplsrouter-check"
quiet 'for p in mplsrouter mplsrouter-run mplsrouter-check mplsrouter-gen-traffic mplsrouter-stats; do
         test -f /usr/share/man/man1/$p.1.gz; done
       test -f /usr/share/bash-completion/completions/mplsrouter
       test -f /usr/share/zsh/vendor-completions/_mplsrouter
       test -f /usr/share/fish/vendor_completions.d/mplsrouter.fish
       test -f /usr/share/doc/mplsrouter/README.md
       test -f /usr/share/doc/mplsrouter/examples/demo.yaml' ||
  fail "man pages, completions or docs missing"
inside 'mplsrouter check /etc/mplsrouter/startup.yaml' || fail "mplsrouter check of the installed config"
conf=$(docker exec "$NAME" dpkg-query -W -f='${Conffiles}' mplsrouter)
for f in /etc/mplsrouter/startup.yaml /etc/mplsrouter/routes.yaml; do
  grep -q " $f " <<<"$conf" || fail "$f is not a conffile: $conf"
done
inside 'systemd-analyze verify /usr/lib/systemd/system/mplsrouter.service' ||
  fail "systemd-analyze verify found problems in the unit"
quiet 'test -L /etc/systemd/system/multi-user.target.wants/mplsrouter.service
       test "$(systemctl is-enabled mplsrouter.service)" = enabled' ||
  fail "the unit is not enabled after install"
# Not started on install, and no hugepage or NIC changes in any maintainer script.
scripts=$(for s in preinst postinst prerm postrm; do dpkg-deb -I "$DEB" "$s" 2>/dev/null || true; done)
if grep -En 'deb-systemd-invoke (start|restart) |systemctl[^|]* (start|restart) |hugepages|devbind|vfio|modprobe' <<<"$scripts"; then
  fail "a maintainer script starts the router or touches hugepages/NICs (above)"
fi
quiet '! ls /proc/[0-9]*/exe -l 2>/dev/null | grep -q /usr/bin/mplsrouter' ||
  fail "installing started the router"
say "--version, man page, completions, check, conffiles, unit verified and enabled, not started: ok"

# The demo: generated traffic replayed on net_pcap, forwarded to net_null.
t=$(date +%s)
out=$(docker exec -w /tmp "$NAME" bash -ec '
  mkdir -p out
  mplsrouter gen-traffic demo --count 1024 --out out/demo-in.pcap >/dev/null
  mplsrouter run --config /usr/share/doc/mplsrouter/examples/demo.yaml --no-huge \
    --duration 3 --stats-interval 0 --file-prefix pkgsuite' 2>&1) ||
  { printf '%s\n' "$out" | tail -n 30; fail "the demo run failed"; }
w=$(grep '^workers: received' <<<"$out" | tail -n1) || true
fwd=$(sed -nE 's/.* forwarded ([0-9]+).*/\1/p' <<<"$w")
otx=$(sed -nE 's/^port out: rx [0-9]+ pkts [0-9]+ bytes, tx ([0-9]+) pkts.*/\1/p' <<<"$out" | tail -n1)
[ "${fwd:-0}" -gt 0 ] && [ "${otx:-0}" -gt 0 ] ||
  { printf '%s\n' "$out" | tail -n 30; fail "the demo forwarded nothing (forwarded ${fwd:-?}, port out tx ${otx:-?})"; }
grep -q '^mbufs not returned to the pool: 0$' <<<"$out" ||
  { printf '%s\n' "$out" | tail -n 30; fail "the demo did not stop cleanly"; }
say "demo on vdevs, --no-huge, 3 s: forwarded $fwd, port out tx $otx, clean stop ($(($(date +%s) - t))s)"

# --- 3. remove, reinstall, purge, reinstall ---------------------------------------------------
EDIT='# local edit by the package suite'
quiet "echo '$EDIT' >>/etc/mplsrouter/routes.yaml; $APT remove mplsrouter" || fail "apt-get remove"
quiet "test ! -e /usr/bin/mplsrouter
       test -f /etc/mplsrouter/startup.yaml
       grep -qx '$EDIT' /etc/mplsrouter/routes.yaml
       dpkg-query -W -f='\${Status}' mplsrouter | grep -qx 'deinstall ok config-files'" ||
  fail "after remove: the binary must be gone and the (edited) conffiles stay"
quiet "dpkg -i /tmp/mplsrouter.deb; grep -qx '$EDIT' /etc/mplsrouter/routes.yaml
       mplsrouter check /etc/mplsrouter/startup.yaml" ||
  fail "reinstall after remove must keep the edited conffile"
say "remove: binary gone, edited conffiles kept; reinstall kept the edit: ok"
quiet "$APT purge mplsrouter" || fail "apt-get purge"
quiet 'test ! -e /etc/mplsrouter
       test ! -e /etc/systemd/system/multi-user.target.wants/mplsrouter.service
       ! dpkg-query -W -f="\${Status}" mplsrouter 2>/dev/null | grep -q installed' ||
  fail "after purge: /etc/mplsrouter and the enablement link must be gone"
quiet "dpkg -i /tmp/mplsrouter.deb
       ! grep -q 'local edit' /etc/mplsrouter/routes.yaml
       mplsrouter --version >/dev/null
       mplsrouter check /etc/mplsrouter/startup.yaml
       test -L /etc/systemd/system/multi-user.target.wants/mplsrouter.service" ||
  fail "reinstall after purge: pristine conffiles, working binary, unit enabled"
say "purge: conffiles and link gone; reinstall: pristine conffiles, check ok"
lintian_result
say "PASS (total $(($(date +%s) - T0))s)"
