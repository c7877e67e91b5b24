#!/usr/bin/env bash
# The blocked kernel with configurations forced, case by case (vkgemm run --kernel blocked --config), each
# verified against the CPU reference before it is timed: what one configuration or split costs against
# another on the same GPU in one call (no cuBLAS; bench-vs-cublas.py is for ratios). CASES holds one case a
# line, `M N K BATCH OPS CONFIG...` (OPS nn, nt, tn or tt; CONFIG as vkgemm run --config takes it, or `auto`
# for the planner's own); `#` starts a comment. Results under $OUT/forced-NAME.tgz; prints one row a case.
# Usage (device tool; carry .gl and the binary; the loader packages are unpacked by the caller):
#   bash tools/gpu/blocked-forced.sh CASES NAME [SECONDS for all, default 300]
# BINARY (default build/release/vkgemm), REPEAT (default 30).
set -u
cases=$1; name=$2; seconds=${3:-300}
bin=${BINARY:-build/release/vkgemm}
R=forced-$name; mkdir -p $R
$bin --version > $R/version.txt 2>&1
end=$(( $(date +%s) + seconds )); i=0
while read -r m n k batch ops config; do
  [[ -z $m || $m == \#* ]] && continue
  left=$(( end - $(date +%s) )); (( left > 5 )) || { echo "cut: no time left" | tee -a $R/rc.txt; break; }
  i=$((i + 1))
  args=(--m "$m" --n "$n" --k "$k" --batch "$batch" --type f32 --repeat "${REPEAT:-30}" --warmup-ms 300 --verify
        --json "$R/$i.json")
  [[ $ops == t? ]] && args+=(--trans-a)
  [[ $ops == ?t ]] && args+=(--trans-b)
  if [[ $config == auto ]]; then args+=(--kernel auto); else args+=(--kernel blocked --config "$config"); fi
  timeout "$left" $bin run "${args[@]}" > "$R/$i.txt" 2>&1
  echo "$i rc $? $m $n $k b$batch $ops $config" >> $R/rc.txt
done < "$cases"
tar czf "$OUT/$R.tgz" $R
python3 - $R <<'PY'
import glob, json, os, sys
folder = sys.argv[1]
for f in sorted(glob.glob(f'{folder}/*.json'), key=lambda f: int(os.path.basename(f)[:-5])):
    try:
        r = json.load(open(f))
    except ValueError as e:
        print(f, e); continue
    print(json.dumps({k: r.get(k) for k in ('m', 'n', 'k', 'batch', 'config', 'median_ms', 'gflops', 'verified', 'build_commit')})[:300])
PY
cat $R/rc.txt
