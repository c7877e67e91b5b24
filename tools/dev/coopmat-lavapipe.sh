#!/usr/bin/env bash
# Usage: tools/dev/coopmat-lavapipe.sh   (from anywhere; prepares build/coopmat-lavapipe/ once)
# The cooperative-matrix pass: runs the coopmat test suite (the KHR kernel's shape grid) on a lavapipe that
# has VK_KHR_cooperative_matrix, under a validation layer that knows the extension.
#
# Debian 12's lavapipe (Mesa 22.3) has no cooperative matrices and its validation layer (1.3.239) does not
# know them. Debian trixie's does: lavapipe 26.1 from trixie-backports lists four 8x8x8 subgroup-scope
# shapes at subgroup 8, and trixie's vulkan-validationlayers is 1.4.309. This script prepares, once, a
# minimal trixie root under build/coopmat-lavapipe/root (debootstrap --variant=minbase, then mesa-vulkan-
# drivers from trixie-backports, libvulkan1 and vulkan-validationlayers inside it; about a minute and
# 650 MB; a stamp file marks it done and a second run reuses it) and runs the Release binaries built on the
# host unchanged against it, through the root's own dynamic loader and libraries:
#   ROOT/.../ld-linux-x86-64.so.2 --library-path ROOT/usr/lib/x86_64-linux-gnu BINARY ...
# with VK_DRIVER_FILES naming the root's lvp_icd json and VK_LAYER_PATH the root's layer manifests.
# The host's apt configuration is never touched: apt runs inside the root (chroot).
#
# Fails loudly (exit 1) when the root cannot be prepared (no network to deb.debian.org, not root), when the
# driver does not list the extension, when the suite skips itself or runs no test case, or on any failure
# or validation message. Needs the Release build (cmake --build --preset release) and root.
#   tools/dev/coopmat-lavapipe.sh            # prepare (once) and run
#   VKGEMM_COOPMAT_ROOT=DIR ...          # another place for the root
#   VKGEMM_COOPMAT_MIRROR=URL ...        # another Debian mirror
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD
root=${VKGEMM_COOPMAT_ROOT:-$here/build/coopmat-lavapipe/root}
stamp=$root/.vkgemm-coopmat-lavapipe-1   # bump the number when what is installed here changes
mirror=${VKGEMM_COOPMAT_MIRROR:-http://deb.debian.org/debian}
bin=$here/build/release

fail() {
  echo "coopmat-lavapipe: FAILED: $*" >&2
  echo "coopmat-lavapipe: FAILED: the cooperative-matrix pass did not run to the end (see above)" >&2
  exit 1
}

if ((EUID != 0)); then
  fail "must run as root (debootstrap and chroot need it; CI runs as root), not as uid $EUID"
fi
for f in "$bin/vkgemm" "$bin/tests/vkgemm_tests" "$bin/tools/vkgemm_network_example"; do
  [[ -x $f ]] || fail "$f is missing: build first (cmake --preset release && cmake --build --preset release)"
done

prepare_root() {
  command -v debootstrap >/dev/null || fail "debootstrap is not installed (tools/install-deps.sh installs it)"
  rm -rf "$root"
  mkdir -p "$(dirname "$root")"
  echo "coopmat-lavapipe: preparing a Debian trixie root in $root (debootstrap, minbase)"
  debootstrap --variant=minbase trixie "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log" >&2; fail "debootstrap trixie from $mirror failed (no network?)"; }
  echo "deb $mirror trixie-backports main" >"$root/etc/apt/sources.list.d/backports.list"
  # Release files can read as expired on a machine whose clock is off; only inside the root.
  local apt=(chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -q -o Acquire::Check-Valid-Until=false)
  { "${apt[@]}" update &&
    "${apt[@]}" install -y --no-install-recommends -t trixie-backports mesa-vulkan-drivers &&
    "${apt[@]}" install -y --no-install-recommends libvulkan1 vulkan-validationlayers &&
    "${apt[@]}" clean; } >"$root.apt.log" 2>&1 ||
    { tail -20 "$root.apt.log" >&2; fail "installing lavapipe and the validation layer in $root failed"; }
  touch "$stamp"
}

start=$(date +%s)
if [[ -f $stamp ]]; then
  echo "coopmat-lavapipe: reusing the root in $root"
else
  prepare_root
fi
echo "coopmat-lavapipe: set-up took $(($(date +%s) - start)) s"

lib=$root/usr/lib/x86_64-linux-gnu
icd=$(find "$root/usr/share/vulkan/icd.d" -name 'lvp_icd*.json' -print -quit 2>/dev/null || true)
[[ -n $icd ]] || fail "no lvp_icd*.json in $root/usr/share/vulkan/icd.d"
[[ -x $lib/ld-linux-x86-64.so.2 ]] || fail "no dynamic loader in $lib"
export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
export VK_LAYER_PATH=$root/usr/share/vulkan/explicit_layer.d
in_root() { "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$@"; }

start=$(date +%s)
devices=$(in_root "$bin/vkgemm" devices) || fail "vkgemm devices failed against $icd"
echo "$devices"
grep -qE 'coopmat +VK_KHR_cooperative_matrix, [0-9]+ shapes' <<<"$devices" || fail "this lavapipe does not list VK_KHR_cooperative_matrix"

# The support suite asserts this lavapipe runs the coopmat kernel, with fp32 and fp16 sums and on i8 and u8
# (VKGEMM_TEST_EXPECT, tests/test_support.cpp); a skip (exit 77) is a failure here; the output is checked
# too, so that a suite that skipped or ran no case cannot pass. The ozaki suite runs here too: its int8
# products go through the KHR kernel on this lavapipe (on Mesa 22, through tiled); and the thin kernel's, which
# multiplies on the KHR matrices.
log=$(mktemp)
set +e
VKGEMM_TEST_EXPECT="kernels=coopmat f16acc=coopmat int8=coopmat" in_root "$bin/tests/vkgemm_tests" --no-version \
  --test-suite=support,coopmat,ozaki,thin 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
summary=$(grep -E '^\[doctest\] test cases:' "$log" || true)
skipped=$(grep -c '^SKIPPED: ' "$log" || true)
# The one skip allowed: the bf16 grid, where this lavapipe lists no bf16 shape (the skip names it; exit 77
# when nothing failed). Every other skip fails.
bf16_skips=$(grep -cE '^SKIPPED: .*the bf16 grid: .*(bf16 x bf16|shaderBFloat16CooperativeMatrix)' "$log" || true)
products=$(grep -c 'products checked, 0 failed' "$log" || true)
rm -f "$log"
((rc == 0 || (rc == 77 && skipped == bf16_skips))) || fail "the coopmat suite failed (exit $rc)"
((skipped == bf16_skips)) || fail "the coopmat suite skipped itself on this lavapipe"
[[ $summary =~ test\ cases:\ *([0-9]+)\ \|\ *([0-9]+)\ passed ]] || fail "no doctest summary in the suite's output"
((BASH_REMATCH[1] > 0 && BASH_REMATCH[2] == BASH_REMATCH[1] && products > 0)) ||
  fail "the coopmat suite ran no case or no product: $summary"
# The fused epilogues on the KHR kernel and the thin kernel (the epilogue suite's coopmat and thin cases: f16
# with C f32 and f16, and with fp16 sums, every activation and bias, staged and applied to fragments stored
# straight); a skip (exit 77) is a failure here too.
VKGEMM_TEST_EXPECT="" in_root "$bin/tests/vkgemm_tests" --no-version --test-suite=epilogue \
  "--test-case=coopmat kernel*,thin kernel" ||
  fail "the epilogue suite's coopmat case failed or skipped (exit $?)"
# The dequantization of int8 products on the KHR kernel (i8 and u8 into f32 and f16, both scales, every
# activation); a skip (exit 77) is a failure here too.
VKGEMM_TEST_EXPECT="" in_root "$bin/tests/vkgemm_tests" --no-version --test-suite=dequant "--test-case=coopmat kernel" ||
  fail "the dequant suite's coopmat case failed or skipped (exit $?)"
# Chains on the KHR kernel (f16 layers; the chain's own intermediates and the application's, in alternating
# regions of one buffer); a skip (exit 77) is a failure here too.
VKGEMM_TEST_EXPECT="" in_root "$bin/tests/vkgemm_tests" --no-version --test-suite=chain ||
  fail "the chain suite failed or skipped (exit $?)"
# vkgemm peak on the KHR matrices this lavapipe lists, under validation: every MMA row, and the MMA fed from
# shared memory for fp32 and fp16 sums, must be measured here (the peak suite checks what each row says).
VKGEMM_TEST_EXPECT="" in_root "$bin/tests/vkgemm_tests" --no-version --test-suite=peak ||
  fail "the peak suite failed or skipped (exit $?)"
peak=$(in_root "$bin/vkgemm" peak --repeat 1 --target-ms 5 --validate) || fail "vkgemm peak failed (exit $?): $peak"
for c in f32 f16; do
  grep -qE "^coopmat [0-9x]+ f16\*f16\+$c \(subgroup, from shared memory\) +[0-9.]+ TFLOP/s" <<<"$peak" ||
    fail "vkgemm peak measured no f16*f16+$c MMA fed from shared memory on this lavapipe: $peak"
done
# The in-frame network example with the cooperative matrices its device now enables: every layer must run on
# a matrix kernel (the example prints each layer's), its first frame checked, under validation.
example=$(in_root "$bin/tools/vkgemm_network_example" --size 64x32 --frames 2 --validate) ||
  fail "the network example failed (exit $?): $example"
echo "$example"
grep -qE '^layer 0: coopmat' <<<"$example" || fail "the network example's layers did not run on a matrix kernel"
echo "coopmat-lavapipe: tests took $(($(date +%s) - start)) s ($summary)"
echo "coopmat-lavapipe: passed"
