#!/usr/bin/env bash
# Usage: tools/install-toolchain.sh   (no arguments; builds into build/toolchain/)
# Provides the shader toolchain the cooperative-matrix kernels need, where the system's is too old:
#   glslangValidator >= 15.1 (GL_NV_cooperative_matrix2; GL_KHR_cooperative_matrix needs 13)
#   Vulkan headers   >= 1.3.300 (VK_NV_cooperative_matrix2).
# Debian 12 ships glslang 12.0 and headers 1.3.239, and trixie's binary packages need a newer glibc, so
# this takes Debian trixie's *source* packages (apt-get source through a private sources list and a
# private apt state, the system's apt configuration untouched), builds only the standalone
# glslangValidator (no optimizer, no HLSL: about a minute on 2 cores) and copies the headers, all into
#   build/toolchain/prefix/{bin,include}
# which CMake picks up by itself (VKGEMM_TOOLCHAIN_PREFIX defaults to it when it exists).
# Idempotent: a stamp records what was built; a second run does nothing. Where the system's toolchain is
# new enough (newer distros), nothing is built and CMake uses the system's.
# Called by tools/install-deps.sh; VKGEMM_SKIP_TOOLCHAIN=1 skips it (the old kernels still build).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD/build/toolchain
prefix=$root/prefix
stamp=$prefix/.vkgemm-toolchain-1   # bump the number when what is built here changes
suite=trixie
mirror=http://deb.debian.org/debian

if [[ "${VKGEMM_SKIP_TOOLCHAIN:-0}" == 1 ]]; then
  echo "install-toolchain: skipped (VKGEMM_SKIP_TOOLCHAIN=1)"
  exit 0
fi
if [[ -f $stamp ]]; then
  echo "install-toolchain: build/toolchain/prefix is up to date"
  exit 0
fi

# Is the system's toolchain new enough? A coopmat2 probe shader and the headers' version decide.
system_ok() {
  command -v glslangValidator >/dev/null || return 1
  local hv
  hv=$(sed -n 's/^#define VK_HEADER_VERSION \([0-9]*\).*/\1/p' /usr/include/vulkan/vulkan_core.h 2>/dev/null)
  local hc
  hc=$(sed -n 's/^#define VK_HEADER_VERSION_COMPLETE VK_MAKE_API_VERSION(0, \([0-9]*\), \([0-9]*\),.*/\1\2/p' \
        /usr/include/vulkan/vulkan_core.h 2>/dev/null)
  # 1.3.300 or 1.4.x
  [[ -n $hv && -n $hc ]] || return 1
  if ((hc < 14)) && ((hv < 300)); then return 1; fi
  local dir
  dir=$(mktemp -d)
  cat >"$dir/probe.comp" <<'EOF'
#version 450
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
void main() { tensorLayoutNV<2> t = createTensorLayoutNV(2); }
EOF
  local ok=1
  glslangValidator -V --target-env vulkan1.3 -o "$dir/probe.spv" "$dir/probe.comp" >/dev/null 2>&1 || ok=0
  rm -rf "$dir"
  ((ok))
}
if system_ok; then
  echo "install-toolchain: the system's glslangValidator and Vulkan headers are new enough; nothing to build"
  exit 0
fi

echo "install-toolchain: building glslangValidator and taking Vulkan headers from Debian $suite sources"
echo "install-toolchain: into build/toolchain/prefix (once; about a minute on 2 cores)"

# A private apt: its own sources list (deb-src only), state, cache and lists; nothing of the system's changes.
apt_dir=$root/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg  # trixie is signed with keys bookworm's keyring has
if [[ -f $keyring ]]; then
  echo "deb-src [signed-by=$keyring] $mirror $suite main" >"$apt_dir/etc/sources.list"
else
  echo "deb-src $mirror $suite main" >"$apt_dir/etc/sources.list"
fi
: >"$apt_dir/status"
apt_opts=(
  -o "Dir::Etc::SourceList=$apt_dir/etc/sources.list"
  -o "Dir::Etc::SourceParts=/nonexistent"
  -o "Dir::State=$apt_dir"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::State::status=$apt_dir/status"
  -o "Dir::Cache=$apt_dir/cache"
  -o "APT::Sandbox::User=root"
  -o "Debug::NoLocking=1"
)
apt-get "${apt_opts[@]}" -qq update

src=$root/src
rm -rf "$src"
mkdir -p "$src"
(cd "$src" && apt-get "${apt_opts[@]}" -qq --download-only source glslang vulkan-loader)

# Unpack only the upstream tarballs (no dpkg-dev needed): <name>_<version>.orig.tar.*
unpack() {
  local name=$1 tarball
  tarball=$(ls "$src"/"${name}"_*.orig.tar.* | head -n1)
  mkdir -p "$src/$name"
  tar -xf "$tarball" -C "$src/$name" --strip-components=1
}
unpack glslang
unpack vulkan-loader   # Debian's vulkan-loader source carries the Vulkan-Headers of its version

# glslangValidator alone: no SPIRV-Tools optimizer, no HLSL, no tests. Statically linked into one binary.
cmake -S "$src/glslang" -B "$root/glslang-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DENABLE_OPT=OFF -DENABLE_HLSL=OFF -DENABLE_GLSLANG_BINARIES=ON \
  -DGLSLANG_TESTS=OFF -DBUILD_TESTING=OFF -DENABLE_SPVREMAPPER=OFF -DBUILD_SHARED_LIBS=OFF \
  -DENABLE_CTEST=OFF -DBUILD_EXTERNAL=OFF >/dev/null
cmake --build "$root/glslang-build" --target glslang-standalone -j "${VKGEMM_TOOLCHAIN_JOBS:-2}"
mkdir -p "$prefix/bin" "$prefix/include"
cp "$(find "$root/glslang-build" -type f -name glslang -perm -u+x | head -n1)" "$prefix/bin/glslang"
ln -sf glslang "$prefix/bin/glslangValidator"

# Headers only: vulkan/ and vk_video/ (vulkan_core.h includes the latter). volk stays the system's
# (libvulkan-volk-dev): trixie's vulkan-volk source is not on the mirror, and the system volk compiles
# against newer headers; the few newer entry points vkgemm calls are loaded by hand
# (engine/src/device_query.cpp, vkGetInstanceProcAddr).
rm -rf "$prefix/include/vulkan" "$prefix/include/vk_video"
cp -r "$src/vulkan-loader/vulkan-headers/include/vulkan" "$src/vulkan-loader/vulkan-headers/include/vk_video" \
  "$prefix/include/"

"$prefix/bin/glslangValidator" --version | head -n1
grep -m1 '^#define VK_HEADER_VERSION ' "$prefix/include/vulkan/vulkan_core.h"
touch "$stamp"
echo "install-toolchain: done"
