#!/usr/bin/env bash
# Puts Debian trixie's Vulkan loader and validation layer (1.4.309) into a folder of .deb files to carry to
# the lent GPU (default .gl, the folder ../shared/device/fetch-vulkan-loader.sh fills), replacing
# bookworm's 1.3.239 ones there. Why: layer 1.3.239 predates VK_KHR_cooperative_matrix and
# VK_NV_cooperative_matrix2, so under it every cooperative-matrix pipeline draws "not supported by this
# layer" messages; the GPU host has glibc 2.39, which trixie's packages need (2.38), while this machine's
# bookworm cannot install them. Only .deb files are downloaded (a private apt state under build/); nothing
# of this system changes. Usage: tools/gpu/fetch-trixie-vulkan.sh [folder]
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${1:-.gl}
mkdir -p "$dest"
apt_dir=$PWD/build/trixie-apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [signed-by=$keyring] http://deb.debian.org/debian trixie main" >"$apt_dir/etc/sources.list"
: >"$apt_dir/status"
opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
      -o "Dir::State=$apt_dir" -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=$apt_dir/status"
      -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
apt-get "${opts[@]}" -qq update
rm -f "$dest"/libvulkan1_*.deb "$dest"/vulkan-validationlayers_*.deb
(cd "$dest" && apt-get "${opts[@]}" -qq download libvulkan1 vulkan-validationlayers)
ls "$dest"
