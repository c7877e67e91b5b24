#!/usr/bin/env bash
# Usage: tools/install-deps.sh   (no arguments)
# Installs what vkgemm needs to build, test and run on Debian 12 / Ubuntu, with apt-get.
# Idempotent: installs only what is missing and says what; works as root or through sudo.
# Then tools/install-toolchain.sh: a newer glslangValidator and Vulkan headers where the system's are too
# old for the cooperative-matrix shaders (unpacked once into build/toolchain/, ignored by git).
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config   # build
  libvulkan-dev                       # Vulkan headers (the loader is loaded at run time through volk)
  libvulkan-volk-dev                  # volk
  glslang-tools                       # glslangValidator: GLSL to SPIR-V at build time
  libcli11-dev libfmt-dev nlohmann-json3-dev  # command line, formatting, JSON
  doctest-dev                         # tests
  libvulkan1 mesa-vulkan-drivers      # the loader and lavapipe, Vulkan on the CPU where there is no GPU
  vulkan-validationlayers             # VK_LAYER_KHRONOS_validation, on in every test
  python3-matplotlib python3-jsonschema  # tools/vkgemm-report (plots) and the bench tests (schema check)
  libblas3 libblas-test python3-numpy python3-pytest python3-venv  # the drop-in BLAS and Python module's tests
  scalapack-mpi-test openmpi-bin      # ScaLAPACK's PBLAS testers under Open MPI (docs/distributed.md)
  libopenmpi-dev                      # MPI's C headers: vkgemm's PDGEMM for ScaLAPACK programs (libvkgemm_pblas)
  clang-14 libclang-rt-14-dev         # the sanitizer build and its fuzzers: clang with ASan, UBSan, libFuzzer
  python3 xz-utils ca-certificates    # fetching the newer shader toolchain (tools/install-toolchain.sh)
  debootstrap                         # the Debian trixie root with a newer lavapipe (tools/dev/coopmat-lavapipe.sh)
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

toolchain() { "$(dirname "$0")/install-toolchain.sh"; }

if ((${#missing[@]} == 0)); then
  echo "install-deps: everything is installed"
  toolchain
  exit 0
fi

sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
toolchain
