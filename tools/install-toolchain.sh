#!/usr/bin/env bash
# Usage: tools/install-toolchain.sh   (no arguments; installs into build/toolchain/)
# Provides the shader toolchain the cooperative-matrix kernels need, where the system's is too old:
#   glslangValidator >= 16 (GL_EXT_bfloat16 for the bf16 matrix kernels; GL_NV_cooperative_matrix2 needs
#                          15.1, GL_KHR_cooperative_matrix 13)
#   Vulkan headers   >= 1.4.311 (VK_KHR_shader_bfloat16; VK_NV_cooperative_matrix2 needs 1.3.300).
# Debian 12 ships glslang 12.0 and headers 1.3.239. Debian unstable ships both new enough as binary
# packages, built for its newer glibc, and the mirror serves those .debs (not their sources). So this
# downloads, through a private sources list and a private apt state (the system's apt configuration is
# untouched), glslang-tools with the C and C++ runtime it was built against (libc6, libstdc++6, libgcc-s1)
# and libvulkan-dev for the headers, unpacks them (dpkg -x, nothing installed) into build/toolchain/root,
# and writes
#   build/toolchain/prefix/bin/glslangValidator  a script running the unpacked glslang through the unpacked
#                                                dynamic loader and libraries, as tools/dev/coopmat-lavapipe.sh
#                                                runs the tests against Mesa 26
#   build/toolchain/prefix/include/{vulkan,vk_video}
# which CMake picks up by itself (VKGEMM_TOOLCHAIN_PREFIX defaults to it when it exists). A probe shader that
# needs GL_EXT_bfloat16 and GL_NV_cooperative_matrix2 must compile, or this fails loudly.
# Idempotent: a stamp records what was installed; a second run does nothing. The downloaded packages are kept
# in ${XDG_CACHE_HOME:-~/.cache}/vkgemm/toolchain-N (VKGEMM_TOOLCHAIN_CACHE), so another clone unpacks them
# without the network. Where the system's toolchain is
# new enough (newer distros), nothing is downloaded and CMake uses the system's.
# Called by tools/install-deps.sh; VKGEMM_SKIP_TOOLCHAIN=1 skips it (the portable kernels still build).
set -euo pipefail
cd "$(dirname "$0")/.."
toolchain=$PWD/build/toolchain
prefix=$toolchain/prefix
stamp=$prefix/.vkgemm-toolchain-2   # bump the number when what is installed here changes
suite=${VKGEMM_TOOLCHAIN_SUITE:-sid}
mirror=${VKGEMM_TOOLCHAIN_MIRROR:-http://deb.debian.org/debian}
cache=${VKGEMM_TOOLCHAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vkgemm/${stamp##*/.vkgemm-}}

if [[ "${VKGEMM_SKIP_TOOLCHAIN:-0}" == 1 ]]; then
  echo "install-toolchain: skipped (VKGEMM_SKIP_TOOLCHAIN=1)"
  exit 0
fi
if [[ -f $stamp ]]; then
  echo "install-toolchain: build/toolchain/prefix is up to date"
  exit 0
fi

# probe GLSLANG: compiles a shader that needs every extension the matrix kernels use.
probe() {
  local dir ok=1
  dir=$(mktemp -d)
  cat >"$dir/probe.comp" <<'GLSL'
#version 450
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_EXT_bfloat16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
void main() {
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  coopmat<bfloat16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a = coopmat<bfloat16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(1.0);
}
GLSL
  "$1" -V --target-env vulkan1.3 -o "$dir/probe.spv" "$dir/probe.comp" >"$dir/log" 2>&1 || { ok=0; cat "$dir/log" >&2; }
  rm -rf "$dir"
  ((ok))
}

headers_ok() {  # headers_ok DIR: vulkan_core.h there is 1.4.311 or later
  local v
  v=$(sed -n 's/^#define VK_HEADER_VERSION \([0-9]*\).*/\1/p' "$1/vulkan/vulkan_core.h" 2>/dev/null)
  [[ -n $v ]] && grep -q 'VK_KHR_shader_bfloat16' "$1/vulkan/vulkan_core.h" && ((v >= 311))
}

if command -v glslangValidator >/dev/null && probe glslangValidator 2>/dev/null && headers_ok /usr/include; then
  echo "install-toolchain: the system's glslangValidator and Vulkan headers are new enough; nothing to install"
  exit 0
fi

echo "install-toolchain: taking glslang and the Vulkan headers from Debian $suite's binary packages"
echo "install-toolchain: into build/toolchain/ (once; a few seconds)"

# A private apt: its own sources list, state, cache and lists; nothing of the system's changes.
apt_dir=$toolchain/apt
rm -rf "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc" "$apt_dir/debs"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""
[[ -f $keyring ]] && signed="[signed-by=$keyring] "
echo "deb ${signed}$mirror $suite main" >"$apt_dir/etc/sources.list"
: >"$apt_dir/status"
apt_opts=(
  -o "Dir::Etc::SourceList=$apt_dir/etc/sources.list"
  -o "Dir::Etc::SourceParts=/nonexistent"
  -o "Dir::State=$apt_dir"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::State::status=$apt_dir/status"
  -o "Dir::Cache=$apt_dir/cache"
  -o "APT::Architecture=amd64"
  -o "APT::Architectures=amd64"
  -o "APT::Sandbox::User=root"
  -o "Debug::NoLocking=1"
)
# The packages are downloaded once per user and machine: kept in $cache (named by the stamp's number), so
# another clone or worktree unpacks them without the network (half a minute of a fresh clone's first build).
if compgen -G "$cache/*.deb" >/dev/null; then
  echo "install-toolchain: the packages downloaded before, from $cache"
  cp "$cache"/*.deb "$apt_dir/debs/"
else
  apt-get "${apt_opts[@]}" -qq update
  (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -qq download glslang-tools libc6 libstdc++6 libgcc-s1 libvulkan-dev)
  # Copied into a private folder and renamed into place, so another run never sees half of them.
  mkdir -p "$(dirname "$cache")"
  partial=$(mktemp -d "$cache.partial.XXXXXX")
  cp "$apt_dir"/debs/*.deb "$partial/"
  mv -T "$partial" "$cache" 2>/dev/null || rm -rf "$partial"  # another run's copy came first
fi

root=$toolchain/root
rm -rf "$root" "$prefix"
mkdir -p "$root" "$prefix/bin" "$prefix/include"
for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
lib=$root/usr/lib/x86_64-linux-gnu
[[ -x $lib/ld-linux-x86-64.so.2 && -x $root/usr/bin/glslang ]] || {
  echo "install-toolchain: FAILED: the unpacked packages hold no glslang or dynamic loader" >&2; exit 1; }

# The wrapper: the unpacked loader runs the unpacked glslang with the unpacked libraries only.
cat >"$prefix/bin/glslangValidator" <<WRAPPER
#!/bin/sh
# Debian $suite's glslang, run through its own dynamic loader and libraries (tools/install-toolchain.sh).
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$root/usr/bin/glslang" "\$@"
WRAPPER
chmod +x "$prefix/bin/glslangValidator"
cp -r "$root/usr/include/vulkan" "$root/usr/include/vk_video" "$prefix/include/"

probe "$prefix/bin/glslangValidator" || {
  echo "install-toolchain: FAILED: $suite's glslang does not compile the probe shader (GL_EXT_bfloat16)" \
       "(packages from $cache: delete it to download them again)" >&2; exit 1; }
headers_ok "$prefix/include" || {
  echo "install-toolchain: FAILED: $suite's Vulkan headers lack VK_KHR_shader_bfloat16" >&2; exit 1; }
"$prefix/bin/glslangValidator" --version | head -n1
grep -m1 '^#define VK_HEADER_VERSION ' "$prefix/include/vulkan/vulkan_core.h"
touch "$stamp"
echo "install-toolchain: done"
