#!/usr/bin/env bash
# Installs the Debian package of a host-built mplsrouter into a runtime image
# (docker/Dockerfile, target `prebuilt`): the same .deb bare metal installs, no Rust
# toolchain and no registry needed. The build context is a small staging directory (the
# .deb and dpdk-config/docker-*.yaml), never the repository with its target/ directory.
#
#   docker/build-image.sh [--deb PATH] [--tag IMAGE] [--base IMAGE] [--testhost]
#
#   --deb PATH     the package (default: scripts/package.sh --no-build makes one from
#                  target/release/mplsrouter; build that first with
#                  cargo build --release --bin mplsrouter)
#   --tag IMAGE    image name (default mplsrouter:local)
#   --base IMAGE   base image (default: whatever docker/build-base.sh finds or makes)
#   --testhost     also build the CI topology's host image (mplsrouter-testhost:local,
#                  or --testhost-tag IMAGE)
set -euo pipefail
cd "$(dirname "$0")/.."

DEB=""
TAG=mplsrouter:local
BASE=""
TESTHOST=0
TESTHOST_TAG=mplsrouter-testhost:local
RUNTIME_BASE_TAG=mplsrouter/runtime-base:local

while [ $# -gt 0 ]; do
  case "$1" in
    --deb) DEB="$2"; shift 2 ;;
    --tag) TAG="$2"; shift 2 ;;
    --base) BASE="$2"; shift 2 ;;
    --testhost) TESTHOST=1; shift ;;
    --testhost-tag) TESTHOST_TAG="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { echo "build-image: $*" >&2; }

if [ -z "$DEB" ]; then
  DEB=$(scripts/package.sh --no-build | tail -n1)
fi
[ -f "$DEB" ] || { log "no package at $DEB (scripts/package.sh makes one)"; exit 1; }
if [ -z "$BASE" ]; then
  BASE=$(docker/build-base.sh | tail -n1)
fi

CTX=$(mktemp -d /tmp/mplsrouter-ctx.XXXXXX)
trap 'rm -rf "$CTX"' EXIT
mkdir -p "$CTX/target/debian" "$CTX/dpdk-config"
cp "$DEB" "$CTX/target/debian/"
cp dpdk-config/docker-*.yaml "$CTX/dpdk-config/"
cp docker/Dockerfile docker/Dockerfile.testhost "$CTX/"

# Output only on failure (the classic builder also nags about buildx on every build).
build() {
  local out
  if ! out=$(docker build --force-rm "$@" 2>&1); then
    printf '%s\n' "$out" >&2
    log "docker build $* failed"
    exit 1
  fi
}

# runtime-base is tagged so removing the packaged image (tests do) keeps its apt layer
# cached for the next build.
log "building $RUNTIME_BASE_TAG (target runtime-base, base $BASE)"
build -q -f "$CTX/Dockerfile" --target runtime-base \
  --build-arg BASE_IMAGE="$BASE" -t "$RUNTIME_BASE_TAG" "$CTX"
log "building $TAG (target prebuilt)"
build -q -f "$CTX/Dockerfile" --target prebuilt --build-arg REQUIRE_BINARY=1 \
  --build-arg BASE_IMAGE="$BASE" -t "$TAG" "$CTX"
if [ "$TESTHOST" = 1 ]; then
  log "building $TESTHOST_TAG"
  build -q -f "$CTX/Dockerfile.testhost" \
    --build-arg BASE_IMAGE="$BASE" -t "$TESTHOST_TAG" "$CTX"
fi
echo "$TAG"
