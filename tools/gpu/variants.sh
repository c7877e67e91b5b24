#!/usr/bin/env bash
# Versions of one dev build beside cuBLAS in one call: shader versions (VKGEMM_EXPERIMENT_SPIRV, folders
# from tools/gpu/compile-coopmat2-spirv.sh) and experiment knobs (VKGEMM_EXPERIMENT_COOPMAT2, ...), each a
# VARIANT "label" (the build as it is) or "label:ASSIGNMENT..." (environment assignments, space-separated).
# Each variant is first checked by `vkgemm run --verify` on VERIFY_SHAPES (default: coopmat2's paths —
# unaligned, aligned inside, edge tiles with beta, sides that are multiples of 8 with beta 0, transposes,
# column-major, split K); a variant that fails one is not timed. Then every case of SET (tools/shape-sets
# format) through tools/bench-vs-cublas.py (each verified again, one round; cuBLAS timed again beside each
# variant), at most SECONDS per variant. Results under $OUT/variants-NAME.tgz; prints each case's rate per
# variant against the first's.
# Usage (device tool; carry .gl, build/dev/vkgemm and the variant folders):
#   bash tools/gpu/variants.sh TYPE SET NAME SECONDS VARIANT...
# BENCH_ARGS adds bench-vs-cublas.py options (--kernel coopmat2 --tile 256), RUN_ARGS `vkgemm run` options to
# the verification; BINARY replaces build/dev/vkgemm; VERIFY_ONLY=1 skips the bench.
set -u
type=$1; set_file=$2; name=$3; seconds=$4; shift 4
bin=${BINARY:-build/dev/vkgemm}
R=variants-$name; mkdir -p $R
$bin --version > $R/version.txt 2>&1
verify_shapes=${VERIFY_SHAPES:-"1000 999 1001 --out-type f32
1024 512 1088 --out-type f16
300 200 500 --alpha 0.5 --beta 0.25 --batch 2 --out-type f16
1000 1000 1000 --out-type f16
1000 1000 1000 --out-type f16 --beta 0.5
1000 2000 1000 --out-type f32 --trans-a --trans-b
2000 1000 1000 --out-type f16 --layout col --trans-b
264 520 8200 --out-type f16
264 520 8200 --out-type f32 --trans-a --alpha 2"}
labels=()
for v in "$@"; do
  label=${v%%:*}; assign=""; [[ $v == *:* ]] && assign=${v#*:}
  labels+=("$label")
  ok=1
  while read -r m n k rest; do
    [[ -z $m ]] && continue
    if ! env $assign timeout 90 $bin run --type "$type" --m "$m" --n "$n" --k "$k" $rest ${RUN_ARGS:-} --repeat 1 --warmup 0 \
         --warmup-ms 0 --verify > $R/verify-$label.log 2>&1; then
      echo "$label: verification FAILED ($m $n $k $rest)" | tee -a $R/rc.txt; tail -3 $R/verify-$label.log; ok=0; break
    fi
  done <<< "$verify_shapes"
  [[ $ok == 1 ]] || continue
  echo "$label: verified" | tee -a $R/rc.txt
  [[ -n ${VERIFY_ONLY:-} ]] && continue
  env $assign timeout "$seconds" python3 tools/bench-vs-cublas.py --vkgemm "$bin" --set "$set_file" --type "$type" \
    --rounds 1 ${BENCH_ARGS:-} --json $R/$label.json > $R/$label.txt 2>&1
  echo "$label: bench rc $?" | tee -a $R/rc.txt
done
tar czf "$OUT/$R.tgz" $R
python3 - $R "${labels[@]}" <<'PY'
import json, sys
folder, labels = sys.argv[1], sys.argv[2:]
def load(label):
    try:
        return {(r['m'], r['n'], r['k'], r['op_a'], r['op_b'], r['layout'], r['batch']): r
                for r in json.load(open(f'{folder}/{label}.json'))['rows'] if 'ratio' in r}
    except (OSError, ValueError, KeyError):
        return {}
runs = {label: load(label) for label in labels}
base = runs[labels[0]] if labels else {}
for key in sorted({k for rows in runs.values() for k in rows}):
    name = 'x'.join(map(str, key[:3])) + ' ' + key[3] + key[4] + ' ' + key[5] + (f' b{key[6]}' if key[6] > 1 else '')
    cells = []
    for label in labels:
        r = runs[label].get(key)
        if r is None:
            cells.append(f'{label} -'); continue
        rel = f" x{r['vkgemm_tflops'] / base[key]['vkgemm_tflops']:.3f}" if key in base and label != labels[0] else ''
        cells.append(f"{label} {r['vkgemm_tflops']:.1f} ({r['ratio']:.3f}){rel} {r['config']}")
    print(f'{name:>30} | ' + ' | '.join(cells))
PY
