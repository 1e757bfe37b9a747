#!/usr/bin/env bash
# CI version of the soak: 30 s of full-rate traffic with route churn (scripts/soak.sh has
# the checks). Uses the release binary scripts/test.sh already built when present.
set -euo pipefail
cd "$(dirname "$0")/../.."
args=(--seconds "${SOAK_SHORT_SECONDS:-30}" --prefixes "${SOAK_SHORT_PREFIXES:-20000}")
[ -x target/release/mplsrouter ] && args+=(--bin target/release/mplsrouter)
exec scripts/soak.sh "${args[@]}"
