#!/usr/bin/env bash
# Small products on a GPU: small squares measured per kernel (tiled 8/16 beside blocked) and written as tuning
# entries (tools/small-square-entries.py); latency beside cuBLAS with the built-in table and
# with the new entries (3 rounds each, same call); the plan/threads/adopt/timing suites under validation.
# Results under $OUT/r.tgz. Prediction and outcome: docs/perf-notes.md section 19. Usage (device tool):
#   bash tools/gpu/small-products.sh   (carry .gl, build/release/vkgemm, build/release/tests/vkgemm_tests)
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
B=build/release/vkgemm; T=build/release/tests/vkgemm_tests; R=r; mkdir -p $R
{ $B --version; $B devices; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > $R/devices.txt 2>&1
S=16,64,256,1024
timeout 60 python3 tools/bench-vs-cublas.py --latency --rounds 3 --latency-sizes $S --json $R/latency-builtin.json \
  > $R/latency-builtin.txt 2>&1; echo "latency-builtin rc $?" >> $R/rc.txt
cp engine/tuning/nvidia-h200.json $R/tuning.json
timeout 150 $B bench --sizes 16,32,64,128,256,384,512 --kernels tiled,blocked --tiles 8,16 --latency-sizes none \
  --no-progress --json $R/small-kernels.json > $R/small-kernels.txt 2>&1; echo "small-kernels rc $?" >> $R/rc.txt
python3 tools/small-square-entries.py $R/small-kernels.json $R/tuning.json "NVIDIA H200" > $R/small-entries.txt 2>&1
VKGEMM_TUNING_FILE=$R/tuning.json timeout 60 python3 tools/bench-vs-cublas.py --latency --rounds 3 --latency-sizes $S \
  --json $R/latency-tuned.json > $R/latency-tuned.txt 2>&1; echo "latency-tuned rc $?" >> $R/rc.txt
for s in plan threads adopt timing; do
  timeout 60 $T --test-suite=$s > $R/test-$s.txt 2>&1; echo "test $s rc $?" >> $R/rc.txt
done
tar czf "$OUT/r.tgz" $R
cat $R/rc.txt; tail -6 $R/latency-builtin.txt; tail -6 $R/latency-tuned.txt
