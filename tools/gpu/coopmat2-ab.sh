#!/usr/bin/env bash
# coopmat2's tile by shape: each of its three tiles (64, 128, 256: 64x64, 128x128, 128x256 with fp32 sums;
# split-K as the kernel chooses) on squares that are not powers of two, and on sizes just off a multiple of
# 16 beside their aligned neighbours (the kernel's unaligned path). C f16, fp32 sums; auto verified first.
# One line per run: shape, what ran, TFLOP/s (median of 30 after 200 ms of warm-up).
# Usage: tools/gpu/coopmat2-ab.sh [vkgemm binary]
set -uo pipefail
bin=${1:-build/release/vkgemm}
run() {
  local m=$1 n=$2 k=$3
  shift 3
  "$bin" run --type f16 --out-type f16 --m "$m" --n "$n" --k "$k" --repeat 30 --warmup-ms 200 "$@" 2>&1 |
    awk -v s="${m}x${n}x${k}" '/^kernel:/ {sub(/^kernel: +/, ""); kern=$0}
      /^gpu time:/ {g=$(NF-1)} /^verify:/ {v=$2}
      END {printf "%-18s %-40s %9.2f TFLOP/s %s\n", s, kern, g / 1000, v}'
}
for n in 1536 2560 3000 3008 3072 4096 5000 5056; do
  run "$n" "$n" "$n" --verify
  for t in 64 128 256; do run "$n" "$n" "$n" --kernel coopmat2 --tile "$t"; done
done
for b in "--batch 32 512" "--batch 64 256"; do
  read -r _ batch size <<<"$b"
  run "$size" "$size" "$size" --batch "$batch" --verify
  for t in 64 128 256; do run "$size" "$size" "$size" --batch "$batch" --kernel coopmat2 --tile "$t"; done
done
