#!/usr/bin/env bash
# The wave model's choices (kernels/blocked_choice.hpp) against the alternatives it weighed, on shapes no
# table entry names: auto (verified first), then the blocked kernel forced to 128x256 unsplit (what the
# nearest tuned shape gave before the model) and to neighbouring split counts. One line per run: shape,
# what ran, TFLOP/s (median of 30 timestamped runs after 200 ms of warm-up). Prediction and outcome go in
# docs/perf-notes.md. Usage: tools/gpu/wave-ab.sh [vkgemm binary]
set -uo pipefail
bin=${1:-build/release/vkgemm}
big="128x256x16 8x8 lanes 16 split"
run() {  # run M N K ARGS...: one timed product; prints the kernel line and TFLOP/s
  local m=$1 n=$2 k=$3
  shift 3
  "$bin" run --m "$m" --n "$n" --k "$k" --repeat 30 --warmup-ms 200 "$@" 2>&1 |
    awk -v s="${m}x${n}x${k}" -v a="$*" '/^kernel:/ {sub(/^kernel: +/, ""); kern=$0}
      /^gpu time:/ {g=$(NF-1)} /^verify:/ {v=$2}
      END {printf "%-18s %-60s %9.2f TFLOP/s %s\n", s, kern, g / 1000, v}'
}
for shape in "1536 1536 1536" "2560 2560 2560" "3000 3000 3000" "5000 5000 5000" "64 4096 4096" \
             "1024 1024 16384" "512 512 32768" "4096 64 4096" "512 512 512"; do
  read -r m n k <<<"$shape"
  run "$m" "$n" "$k" --verify
  for s in 1 2 3 4 6; do
    run "$m" "$n" "$k" --kernel blocked --config "$big $s group 1"
  done
  run "$m" "$n" "$k" --kernel blocked --config "64x64x16 8x4 lanes 16 split 1 group 16"
done
