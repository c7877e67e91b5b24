#!/usr/bin/env bash
# coopmat2's tiles forced one by one over a shape set, beside cuBLAS in the same call (the planner's tile
# choice measured against each alternative). Each tile a `bench-vs-cublas.py --kernel coopmat2 --tile T` of
# the set (every row verified first; cuBLAS timed again beside each tile), at most SECONDS per tile; the
# JSON is rewritten after every case, so a tile cut short keeps what it measured. Results under
# $OUT/tiles-NAME.tgz; prints each case's rate per tile. Usage (device tool; carry .gl and the binary;
# the loader packages are unpacked by the caller):
#   bash tools/gpu/tiles-forced.sh SET NAME SECONDS TILE...   (TILE: a --tile value, or value:ENV=... as
#   in variants.sh, for the experiment knob of a dev build)
# BINARY (default build/release/vkgemm), TYPE (f16), BENCH_ARGS: more bench-vs-cublas.py options.
set -u
set_file=$1; name=$2; seconds=$3; shift 3
bin=${BINARY:-build/release/vkgemm}
R=tiles-$name; mkdir -p $R
$bin --version > $R/version.txt 2>&1
labels=()
for v in "$@"; do
  tile=${v%%:*}; assign=""; [[ $v == *:* ]] && assign=${v#*:}
  label=$tile; [[ -n $assign ]] && label="$tile-${assign//[^A-Za-z0-9]/_}"
  labels+=("$label")
  env $assign timeout "$seconds" python3 tools/bench-vs-cublas.py --vkgemm "$bin" --set "$set_file" \
    --type "${TYPE:-f16}" --kernel coopmat2 --tile "$tile" --rounds 1 ${BENCH_ARGS:-} --json "$R/$label.json" \
    > "$R/$label.txt" 2>&1
  echo "$label: rc $?" | tee -a $R/rc.txt
done
tar czf "$OUT/$R.tgz" $R
python3 - $R "${labels[@]}" <<'PY'
import json, sys
folder, labels = sys.argv[1], sys.argv[2:]
rows = {}
for label in labels:
    try:
        for r in json.load(open(f'{folder}/{label}.json'))['rows']:
            if 'ratio' in r:
                key = f"{r['batch']}*{r['m']}x{r['n']}x{r['k']} {r['op_a']}{r['op_b']} {r['layout']}"
                rows.setdefault(key, {})[label] = r
    except (OSError, ValueError, KeyError) as e:
        print(f'{label}: {e}')
for key, by in rows.items():
    cells = '  '.join(f"{l} {by[l]['vkgemm_tflops']:.1f} ({by[l]['ratio']:.3f})" if l in by else f'{l} -' for l in labels)
    print(f'{key:34} {cells}')
PY
