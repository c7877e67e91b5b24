#!/usr/bin/env bash
# The packages users install, from a fresh clone: a Release build without the tests (build/package), then
# cpack: build/package/vkgemm_VERSION_ARCH.deb (Debian's naming) and vkgemm-VERSION-Linux-ARCH.tar.gz
# (what they hold: cmake/package.cmake; docs/building.md).
#   tools/dev/package.sh            then   sudo apt install ./build/package/vkgemm_*.deb
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset package >/dev/null
cmake --build --preset package
cd build/package && cpack
