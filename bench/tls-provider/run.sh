#!/usr/bin/env bash
# Handshake CPU of rustls's ring and aws-lc-rs providers on this machine,
# pinned to one core, 3 rounds each, interleaved. Usage: bench/tls-provider/run.sh [N]
set -euo pipefail
cd "$(dirname "$0")"
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/tmp/tls-provider-target} cargo build --release -q
exec taskset -c "${CPU:-1}" "${CARGO_TARGET_DIR:-/tmp/tls-provider-target}/release/tls-provider-bench" "${1:-2000}"
