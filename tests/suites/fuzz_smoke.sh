#!/usr/bin/env bash
# CI smoke run of every fuzz target (20 s each by default, FUZZ_SMOKE_SECONDS overrides).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec scripts/fuzz.sh "${FUZZ_SMOKE_SECONDS:-20}"
