#!/usr/bin/env bash
# Usage: tools/gpu/run.sh check-fp16   (no arguments; VKGEMM_DEVICE picks the device)
# fp16 on a GPU: verifies each cooperative-matrix kernel the device supports over edge shapes, then times
# fp16 products (C f32) at 4096^2, 8192^2 and 4096x512x14336 and prints TFLOP/s.
# Run from the repository root with build/release present (vkgemm carries its SPIR-V and loads Vulkan at
# run time). Exit status: 0 all verified, 1 a verification failed or a kernel errored unexpectedly.
# A kernel the device lacks is reported and skipped; none at all is exit 1. About 1 to 3 minutes;
# VKGEMM_DEVICE picks the device.
set -uo pipefail
cd "$(dirname "$0")/../../.."
# The forced split counts below (VKGEMM_EXPERIMENT_COOPMAT2) are read only by a developer build: the dev
# preset's build/dev/vkgemm (cmake --preset dev && cmake --build --preset dev --target vkgemm_program, here,
# carried beside build/release). Without it those runs fail, saying so; every other run is the release build's.
bin=build/release/vkgemm
dev_bin=build/dev/vkgemm
[[ -x $bin ]] || { echo "check-fp16: $bin not found; build first (cmake --preset release && cmake --build --preset release)" >&2; exit 2; }

failures=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== devices"
$bin devices

# run <label> <args...>: one `vkgemm run`; prints one line; counts failures.
# run_bin (default $bin) names another binary for one call: the dev build, for the experiment knobs.
run() {
  local label=$1
  shift
  "${run_bin:-$bin}" run "$@" >"$log" 2>&1
  local rc=$?
  if ((rc == 0)); then
    echo "ok    $label: $(grep -E '^(kernel|verify|gpu time)' "$log" | sed 's/^ *//' | tr '\n' ' ')"
  else
    echo "FAIL  $label (exit $rc):"
    sed 's/^/      /' "$log"
    failures=$((failures + 1))
  fi
  return $rc
}

# supported <kernel>: whether the device can run it (a refusal names what is missing).
supported() {
  local out
  out=$($bin run --type f16 --kernel "$1" --m 16 --n 16 --k 16 --repeat 1 --warmup 0 2>&1)
  local rc=$?
  if ((rc == 2)) && grep -qE "does not have|lists none|has no $1 kernel" <<<"$out"; then
    echo "skip  $1: $(grep -E 'error|vkgemm' <<<"$out" | head -n1)"
    return 1
  fi
  return 0  # anything else (success or another failure) is exercised and reported below
}

# Edge shapes: 1, around the 16-wide fragments, around the 64/128/256 tiles, primes, skinny, and aligned
# shapes that take the kernels' fast (unclamped, 16-byte) paths; all small enough to verify on the CPU.
shapes=(
  "1 1 1" "15 17 33" "16 16 16" "17 15 31" "63 65 64" "64 64 64" "65 63 129" "127 129 127" "128 256 64"
  "129 257 65" "255 256 257" "256 255 31" "1 300 77" "300 1 77" "77 300 1" "512 512 512" "1024 1024 1024"
  "4096 512 64" "1000 999 1001"
)

kernels=()
for k in coopmat2 coopmat; do supported $k && kernels+=("$k"); done
if ((${#kernels[@]} == 0)); then
  echo "check-fp16: this device (or this build) runs no cooperative-matrix kernel; nothing to verify"
  exit 1
fi

for k in "${kernels[@]}"; do
  echo "== verify $k (f16 inputs; C f32 unless said; tile 16 = chosen by shape)"
  tiles="16 64 128"
  [[ $k == coopmat2 ]] && tiles="16 64 128 256"
  for s in "${shapes[@]}"; do
    read -r m n kk <<<"$s"
    run "$k ${m}x${n}x${kk}" --type f16 --kernel "$k" --m "$m" --n "$n" --k "$kk" --repeat 1 --warmup 0 --verify
  done
  for t in $tiles; do
    for s in "129 257 65" "512 512 512"; do
      read -r m n kk <<<"$s"
      run "$k tile $t ${m}x${n}x${kk}" --type f16 --kernel "$k" --tile "$t" --m "$m" --n "$n" --k "$kk" --repeat 1 --warmup 0 --verify
    done
  done
  for s in "65 63 129" "512 512 512" "1000 999 1001"; do
    read -r m n kk <<<"$s"
    run "$k C f16 ${m}x${n}x${kk}" --type f16 --out-type f16 --kernel "$k" --m "$m" --n "$n" --k "$kk" --repeat 1 --warmup 0 --verify
    run "$k f16-accumulate ${m}x${n}x${kk}" --type f16 --f16-accumulate --kernel "$k" --m "$m" --n "$n" --k "$kk" --repeat 1 --warmup 0 --verify
  done
  if [[ $k == coopmat2 ]]; then
    # Transposed operands, and split-K (a short grid with a long K): 512x256x8192 in 4 slices of 64x64
    # tiles, 1000x300x5000 in 2; 2048x1024x8192 with fp16 sums in 4 slices of 256x256 tiles.
    for s in "129 257 65" "512 256 8192" "1000 300 5000"; do
      read -r m n kk <<<"$s"
      for t in "" "--trans-a" "--trans-b" "--trans-a --trans-b"; do
        run "$k ${t:-untransposed} ${m}x${n}x${kk}" --type f16 --kernel "$k" $t --m "$m" --n "$n" --k "$kk" --repeat 1 --warmup 0 --verify
      done
    done
    # The fast path behind every f16 headline: tiles inside the matrices, 16-byte aligned, K at least
    # BK x UNROLL (256 to 1024) from a slice start that is a multiple of 256. Unsplit (grids that fill the
    # GPU: 1024^2 and 2048x1024 at K 2048 and 4096) and split (a short grid with a long K, which the
    # planner splits: 256x256x8192, 4096x512x14336), with fp32 sums (C f32 and C f16) and fp16 sums, judged
    # by the random-rounding model bound (docs: reference.hpp), which rejects a dropped K step or slice.
    echo "== coopmat2 fast path (K >= 2048, interior aligned tiles)"
    for s in "1024 1024 2048" "2048 1024 4096" "256 256 8192" "4096 512 14336"; do
      read -r m n kk <<<"$s"
      for f in "" "--out-type f16" "--f16-accumulate --out-type f16" "--trans-b --out-type f16"; do
        run "$k fast path ${m}x${n}x${kk} ${f:-C f32}" --type f16 --kernel "$k" $f --m "$m" --n "$n" --k "$kk" \
          --repeat 1 --warmup 0 --verify
      done
    done
    run "$k f16-accumulate 2048x1024x8192" --type f16 --f16-accumulate --kernel "$k" --m 2048 --n 1024 --k 8192 --repeat 1 --warmup 0 --verify
    run "$k f16-accumulate --trans-b 2048x1024x8192, alpha, beta" --type f16 --f16-accumulate --kernel "$k" --trans-b --alpha 0.5 --beta 2 --m 2048 --n 1024 --k 8192 --repeat 1 --warmup 0 --verify
    # Split-K across slice boundaries, the count forced (VKGEMM_EXPERIMENT_COOPMAT2=splits=S): slices are
    # multiples of 256, so these K leave a last slice of 1 to 88 (a partial, clamped step), on tiles inside
    # the matrices (the fast path) and at their edges (the general path). Under the validation layer when
    # it is installed (exit 3 on any message).
    validate=()
    ls /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json >/dev/null 2>&1 && validate=(--validate)
    echo "== split-K across slice boundaries${validate[*]:+ (under validation)}, with $dev_bin"
    if [[ ! -x $dev_bin ]]; then
      echo "FAIL  split-K with the count forced: $dev_bin (the dev preset's build) is not here"
      failures=$((failures + 1))
    else
      for c in "2 256 256 257" "3 256 512 600" "2 129 257 513" "3 1000 999 1030" "4 512 256 2048"; do
        read -r sp m n kk <<<"$c"
        for f in "" "--trans-a --trans-b" "--out-type f16 --alpha 0.5 --beta 2 --batch 2" "--f16-accumulate --out-type f16"; do
          run_bin=$dev_bin VKGEMM_EXPERIMENT_COOPMAT2=splits=$sp run "$k splits=$sp ${m}x${n}x${kk} ${f:-plain}" --type f16 \
            --kernel "$k" $f --m "$m" --n "$n" --k "$kk" --repeat 1 --warmup 0 --verify "${validate[@]}" &&
            if ! grep -q "split $sp" "$log"; then
              echo "FAIL  the split count was not forced to $sp (the kernel line says otherwise)"
              failures=$((failures + 1))
            fi
        done
      done
    fi
  fi
done

# coopmat2's 16-row tile (K at least 4096, fewer than 512 tiles): 1 to 16 rows, the short ones through the
# unrolled loop with A alone clamped; columns short of a tile, a K past whole steps, each op, beta, the
# epilogue, a 16-bit C, bf16, a batch; B's rows not a multiple of 8 elements (4100 and 300 columns, K 4097 with
# B transposed) take the general path.
if [[ " ${kernels[*]} " == *" coopmat2 "* ]]; then
  echo "== verify coopmat2's 16-row tile (short rows)"
  for s in "1 4096 4096" "3 1000 4096" "15 4100 5000" "16 4096 4097" "7 300 8192"; do
    read -r m n kk <<<"$s"
    for f in "--type f16" "--type f16 --trans-a" "--type f16 --trans-b" "--type f16 --trans-a --trans-b" \
             "--type f16 --out-type f16 --beta 0.5" "--type f16 --bias col --act gelu-tanh" \
             "--type bf16 --out-type bf16 --beta -1 --bias col --act silu" "--type f16 --batch 3"; do
      run "coopmat2 ${m}x${n}x${kk} $f" --kernel coopmat2 $f --m "$m" --n "$n" --k "$kk" \
        --repeat 1 --warmup 0 --verify &&
        if ! grep -q "16x64" "$log"; then
          echo "FAIL  ${m}x${n}x${kk} $f: not on the 16-row tile (the kernel line says otherwise)"
          failures=$((failures + 1))
        fi
    done
  done
fi

# The matrix kernels' own bf16 C store (beta 0, one slice: coopmat2's rounded bits through an f16
# accumulator, the KHR kernel's 8 elements packed from its staging area, a fused epilogue applied to the
# fragment in registers first): tiles inside C and at its edges, each op, the epilogue, a batch, and outputs
# whose bf16 bits read as f16 NaNs and infinities (alpha 1e36: the bits must move unchanged). (Outputs below
# 2^-126 are not among them: the driver flushes fp32 sums there, before the store, every kernel alike.)
for kernel in coopmat2 coopmat; do
  [[ " ${kernels[*]} " == *" $kernel "* ]] || continue
  echo "== verify $kernel's bf16 C store"
  for s in "4096 4096 1024" "1000 1000 1000" "777 333 129" "64 4100 300"; do
    read -r m n kk <<<"$s"
    for f in "" "--trans-a --trans-b" "--alpha 1e36" "--bias col --act gelu-tanh" \
             "--bias row --bias-type bf16 --act silu --alpha -3e35" "--batch 3 --trans-b"; do
      run "$kernel bf16 C ${m}x${n}x${kk} ${f:-plain}" --kernel "$kernel" --type bf16 --out-type bf16 $f \
        --m "$m" --n "$n" --k "$kk" --repeat 1 --warmup 0 --verify &&
        if grep -q "C through fp32" "$log"; then
          echo "FAIL  ${m}x${n}x${kk} $f: C went through the fp32 workspace, not the kernel's own store"
          failures=$((failures + 1))
        fi
    done
  done
done

# The thin kernel's bf16 C store (a fragment at a time through its fp32 area, 8 elements rounded an invocation
# and stored as one 16-byte unit): blocks inside C, a padded block (48 columns in a block of 64), a last block
# past M, K off whole fragments (A staged), 128 columns (B read from shared memory), the epilogue, alpha 1e36,
# a batch.
if supported thin; then
  echo "== verify the thin kernel's bf16 C store"
  for s in "262144 64 64" "100000 48 64" "99999 40 40" "65536 128 64" "4096 16 32"; do
    read -r m n kk <<<"$s"
    for f in "" "--alpha 1e36" "--bias col --act gelu-tanh" "--bias row --bias-type bf16 --act silu" \
             "--batch 2 --trans-b" "--beta 0.5"; do
      run "thin bf16 C ${m}x${n}x${kk} ${f:-plain}" --kernel thin --type bf16 --out-type bf16 $f \
        --m "$m" --n "$n" --k "$kk" --repeat 1 --warmup 0 --verify
    done
  done
fi

# The test suite's f16 cases on this device: sizes around every fragment and tile boundary for each
# coopmat kernel (64 and 128 tiles), C f16, exact small integers, guard regions and poisoned outputs.
# Under the validation layer when it is installed; otherwise without, saying so.
tests=build/release/tests/vkgemm_tests
if [[ -x $tests ]]; then
  echo "== test suite f16 (boundary grid on the coopmat kernels)"
  $tests --test-suite=f16 >"$log" 2>&1
  rc=$?
  if ((rc != 0)) && grep -q "VK_LAYER_KHRONOS_validation is not installed\|lacks VK_EXT_debug_utils" "$log"; then
    echo "(no validation layer here: running the f16 suite without validation)"
    VKGEMM_TEST_VALIDATION=0 $tests --test-suite=f16 >"$log" 2>&1
    rc=$?
  fi
  tail -n 4 "$log"
  if ((rc != 0)); then
    echo "FAIL  test suite f16 (exit $rc):"
    grep -E "ERROR|FAIL|logged" "$log" | head -n 40 | sed 's/^/      /'
    failures=$((failures + 1))
  fi
else
  echo "skip  test suite f16: $tests not found"
fi

# tflops <args...>: the median TFLOP/s of a timed run, or "error".
tflops() {
  if $bin run "$@" >"$log" 2>&1; then
    sed -n 's/^gpu time: .* ms .*, \([0-9.]*\) GFLOP\/s.*/\1/p' "$log" | awk '{printf "%.1f", $1 / 1000}'
  else
    echo "error: $(grep -v '^$' "$log" | tail -n1)"
    failures=$((failures + 1))
  fi
}

echo "== timing: fp16 inputs, C f32, median of 20 after 5 warm-up (TFLOP/s; tile 16 = chosen by shape)"
printf '%-10s %-6s %14s %14s %18s\n' kernel tile 4096^2 8192^2 4096x512x14336
for k in "${kernels[@]}"; do
  tiles="16 64 128"
  [[ $k == coopmat2 ]] && tiles="16 64 128 256"
  for t in $tiles; do
    a=$(tflops --type f16 --kernel "$k" --tile "$t" --m 4096 --n 4096 --k 4096 --repeat 20 --warmup 5)
    b=$(tflops --type f16 --kernel "$k" --tile "$t" --m 8192 --n 8192 --k 8192 --repeat 20 --warmup 5)
    c=$(tflops --type f16 --kernel "$k" --tile "$t" --m 4096 --n 512 --k 14336 --repeat 20 --warmup 5)
    printf '%-10s %-6s %14s %14s %18s\n' "$k" "$t" "$a" "$b" "$c"
  done
done
# fp16 accumulation (C f16), chosen tile, for what it gains where the hardware has double-rate fp16 sums.
for k in "${kernels[@]}"; do
  a=$(tflops --type f16 --f16-accumulate --kernel "$k" --m 4096 --n 4096 --k 4096 --repeat 20 --warmup 5)
  c=$(tflops --type f16 --f16-accumulate --kernel "$k" --m 4096 --n 512 --k 14336 --repeat 20 --warmup 5)
  printf '%-10s %-6s %14s %14s %18s\n' "$k" "acc16" "$a" "-" "$c"
done
# The SIMT fallback, for scale (no matrix units).
a=$(tflops --type f16 --kernel tiled --tile 16 --m 4096 --n 4096 --k 4096 --repeat 5 --warmup 1)
printf '%-10s %-6s %14s %14s %18s\n' tiled 16 "$a" "-" "-"

if ((failures)); then
  echo "check-fp16: $failures FAILED"
  exit 1
fi
echo "check-fp16: all verified"
