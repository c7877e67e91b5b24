#!/usr/bin/env bash
# Installs what is missing, builds (Release, build/release) and runs the whole test suite through ctest.
# The tests run on whatever Vulkan device is best here (lavapipe on a machine without a GPU; set
# VKGEMM_DEVICE to choose), always with VK_LAYER_KHRONOS_validation on. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release -j "$(nproc)" "$@"
