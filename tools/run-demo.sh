#!/usr/bin/env bash
# Usage: tools/run-demo.sh [vkgemm demo options...]
# Installs what is missing, builds Release and runs `vkgemm demo` on the default device.
# Extra arguments go to the demo (for example --device llvmpipe, or --validate).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target vkgemm_program
exec build/release/vkgemm demo "$@"
