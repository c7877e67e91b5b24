#!/usr/bin/env bash
# Puts a newer Debian's Vulkan loader and validation layer into a folder of .deb files to carry to the lent
# GPU (default .gl, the folder ../shared/device/fetch-vulkan-loader.sh fills), replacing bookworm's 1.3.239
# ones there. Why: layer 1.3.239 predates VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix2, so under
# it every cooperative-matrix pipeline draws "not supported by this layer" messages; and trixie's 1.4.309
# predates VK_KHR_shader_bfloat16, so on a device with it (the H100) vkCreateDevice draws an unknown
# extension and structure, and every bf16 pipeline an unknown capability. Hence sid's layer (1.4.363, which
# knows them: the bf16 suites ran clean under it on the H100; it needs glibc 2.38 and libstdc++ 14, which
# the GPU host has, while this machine's bookworm cannot install it); VKGEMM_GPU_VULKAN_SUITE=trixie takes
# trixie's. Only .deb files are downloaded (a private apt state under build/); nothing of this system
# changes. Usage: tools/gpu/run.sh fetch-vulkan-layer [folder]
set -euo pipefail
cd "$(dirname "$0")/../../.."
dest=${1:-.gl}
mkdir -p "$dest"
suite=${VKGEMM_GPU_VULKAN_SUITE:-sid}
apt_dir=$PWD/build/$suite-apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" >"$apt_dir/etc/sources.list"
: >"$apt_dir/status"
opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
      -o "Dir::State=$apt_dir" -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=$apt_dir/status"
      -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
apt-get "${opts[@]}" -qq update
rm -f "$dest"/libvulkan1_*.deb "$dest"/vulkan-validationlayers_*.deb
(cd "$dest" && apt-get "${opts[@]}" -qq download libvulkan1 vulkan-validationlayers)
ls "$dest"
