#!/usr/bin/env bash
# The packages users install, from a fresh clone: a Release build without the tests (build/package), then
# cpack: build/package/vkgemm-VERSION-Linux-ARCH.deb and .tar.gz (what they hold: cmake/package.cmake).
#   tools/package.sh            then   sudo apt install ./build/package/vkgemm-*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset package >/dev/null
cmake --build --preset package
cd build/package && cpack
