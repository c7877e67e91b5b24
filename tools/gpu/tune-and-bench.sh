#!/usr/bin/env bash
# Tunes vkgemm's blocked kernel on this machine's GPU and compares it with cuBLAS in the same run.
# Run from the repository root with a Release build in build/release (see docs/gpu.md); needs python3
# with torch (CUDA) for cuBLAS. Writes everything under $OUT (default out/gpu):
#   tuning.json        the tuning table for this device (copy it to engine/tuning/<device>.json)
#   tune-*.txt         what the tuner found per shape
#   bench-*.json/.txt  vkgemm (tuned) against cuBLAS, per shape: TFLOP/s and the ratio
# Usage: tools/gpu/tune-and-bench.sh    (set PHASES="tune bench" to choose the phases; results name the binary's own commit)
set -euo pipefail
out=${OUT:-out/gpu}
mkdir -p "$out"
bin=build/release/vkgemm
phases=${PHASES:-tune bench}
export VKGEMM_TUNING_FILE="$out/tuning.json"

if [[ " $phases " == *" tune "* ]]; then
  "$bin" tune --type f32 --out "$out/tuning.json" | tee "$out/tune-f32.txt"
  "$bin" tune --type f64 --sizes 1024 4096 --out "$out/tuning.json" | tee "$out/tune-f64.txt"
fi
if [[ " $phases " == *" bench "* ]]; then
  python3 tools/bench-vs-cublas.py --json "$out/bench-f32.json" | tee "$out/bench-f32.txt"
  python3 tools/bench-vs-cublas.py --type f64 --shapes 1024 4096 --json "$out/bench-f64.json" \
    | tee "$out/bench-f64.txt"
fi
