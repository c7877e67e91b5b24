#!/usr/bin/env bash
# coopmat2's time against K at a fixed M x N, for each tile, beside cuBLAS: splits a product's time into a
# fixed cost per tile (launch, first loads, epilogue: the intercept) and the K loop (the slope), the question
# perf-notes section 23 leaves for the K-light cases. Results under $OUT/f16-k-sweep.tgz. Usage (device tool;
# carry .gl and the binary):
#   bash tools/gpu/f16-k-sweep.sh [MxN, default 8192x8192] [SECONDS, 540] [BINARY, build/release/vkgemm]
#        [TILES, default "256 128 64"] [NAME, default f16-k-sweep]
# KS (default "64 128 256 512 1024 2048 4096") sets the K values; BENCH_ARGS adds bench-vs-cublas.py
# options (--no-verify for a diagnostic binary whose result is wrong on purpose, --out-type f32).
set -u
mn=${1:-8192x8192}; seconds=${2:-540}; binary=${3:-build/release/vkgemm}; tiles=(${4:-256 128 64})
R=${5:-f16-k-sweep}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p $R
$binary --version > $R/version.txt 2>&1
shapes=(); for k in ${KS:-64 128 256 512 1024 2048 4096}; do shapes+=("${mn}x$k"); done
per=$(( seconds / ${#tiles[@]} ))
for tile in "${tiles[@]}"; do
  timeout "$per" python3 tools/bench-vs-cublas.py --vkgemm "$binary" --type f16 --kernel coopmat2 --tile $tile --shapes "${shapes[@]}" \
    --rounds 1 ${BENCH_ARGS:-} --json $R/tile$tile.json > $R/tile$tile.txt 2>&1; echo "tile $tile rc $?" | tee -a $R/rc.txt
done
tar czf "$OUT/$R.tgz" $R
python3 - $R/tile*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    try:
        rows = [r for r in json.load(open(path))["rows"] if "vkgemm_median_ms" in r]
    except (OSError, ValueError, KeyError) as e:
        print(f"{path}: {e}"); continue
    if len(rows) < 2:
        print(f"{path}: fewer than two rows"); continue
    ks = [r["k"] for r in rows]; ts = [r["vkgemm_median_ms"] for r in rows]; cs = [r["cublas_median_ms"] for r in rows]
    def fit(ys):  # least squares y = a + b k
        n = len(ks); mk = sum(ks) / n; my = sum(ys) / n
        b = sum((k - mk) * (y - my) for k, y in zip(ks, ys)) / sum((k - mk) ** 2 for k in ks)
        return my - b * mk, b
    (a, b), (ca, cb) = fit(ts), fit(cs)
    print(f"{path}: vkgemm {a * 1e3:.1f} us + {b * 1e6:.2f} ns/K; cuBLAS {ca * 1e3:.1f} us + {cb * 1e6:.2f} ns/K")
    for r in rows:
        print(f"  K {r['k']:5} vkgemm {r['vkgemm_median_ms']:.4f} ms ({r['ratio']:.3f} of cuBLAS) {r['config']}")
PY
