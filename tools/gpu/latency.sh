#!/usr/bin/env bash
# Small-product latency beside cuBLAS (tools/bench-vs-cublas.py --latency, 3 rounds) with the built-in tables;
# results under $OUT/latency.tgz. Usage (device tool; carry .gl, build/release/vkgemm):
#   bash tools/gpu/latency.sh [SIZES, default 16,64,256,1024]
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
R=latency; mkdir -p $R
{ build/release/vkgemm --version; build/release/vkgemm devices; } > $R/devices.txt 2>&1
timeout 90 python3 tools/bench-vs-cublas.py --latency --rounds 3 --latency-sizes "${1:-16,64,256,1024}" \
  --json $R/latency.json > $R/latency.txt 2>&1; echo "latency rc $?" | tee $R/rc.txt
tar czf "$OUT/$R.tgz" $R
tail -7 $R/latency.txt
