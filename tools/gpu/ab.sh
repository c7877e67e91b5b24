#!/usr/bin/env bash
# A/B of two vkgemm binaries beside cuBLAS in one call: each case of SET (tools/shape-sets format) for TYPE
# through tools/bench-vs-cublas.py with the binary A, then with B (one round per case, each verified first;
# cuBLAS timed again with each). Run first, when given, the test suites in SUITES (vkgemm_tests
# --test-suite=..., under the validation layer .gl carries) with B's build. Results under $OUT/ab-NAME.tgz.
# Usage (device tool; carry .gl and both binaries, and build/release/tests/vkgemm_tests with SUITES):
#   bash tools/gpu/ab.sh TYPE SET A_BINARY B_BINARY NAME [SUITES] [SECONDS for both series, default 480]
# TESTS_SECONDS (default 200) bounds the test suites.
set -u
type=$1; set_file=$2; a=$3; b=$4; name=$5; suites=${6:-}; seconds=${7:-480}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
R=ab-$name; mkdir -p $R
{ echo "A: $a $($a --version 2>&1)"; echo "B: $b $($b --version 2>&1)"; } | tee $R/version.txt
if [[ -n $suites ]]; then
  s=$(date +%s)
  timeout "${TESTS_SECONDS:-200}" build/release/tests/vkgemm_tests --test-suite="$suites" > $R/tests.txt 2>&1
  echo "tests $suites rc $? in $(( $(date +%s) - s )) s" | tee -a $R/rc.txt
  tail -5 $R/tests.txt
fi
half=$(( seconds / 2 ))
for side in a b; do
  bin=$a; [[ $side == b ]] && bin=$b
  timeout "$half" python3 tools/bench-vs-cublas.py --vkgemm "$bin" --set "$set_file" --type "$type" --rounds 1 \
    --json $R/$side.json > $R/$side.txt 2>&1
  echo "$side rc $?" | tee -a $R/rc.txt
done
tar czf "$OUT/$R.tgz" $R
python3 - $R/a.json $R/b.json <<'PY'
import json, sys
def load(f):
    try:
        return {(r['m'], r['n'], r['k'], r['op_a'], r['op_b'], r['batch']): r for r in json.load(open(f))['rows']}
    except (OSError, ValueError, KeyError) as e:
        print(f'{f}: {e}'); return {}
rows = [load(f) for f in sys.argv[1:]]
for key, ra in rows[0].items():
    rb = rows[1].get(key)
    if rb is None or 'ratio' not in ra or 'ratio' not in rb:
        print(key, 'not in both, or failed (see a.txt, b.txt)'); continue
    print('{:>28} A {:7.1f} ({:.3f}) {:<24} B {:7.1f} ({:.3f}) {:<24} B/A {:.3f}'.format(
        'x'.join(map(str, key[:3])) + ' ' + key[3] + key[4] + (f' b{key[5]}' if key[5] > 1 else ''),
        ra['vkgemm_tflops'], ra['ratio'], ra['config'], rb['vkgemm_tflops'], rb['ratio'], rb['config'],
        rb['vkgemm_tflops'] / ra['vkgemm_tflops']))
PY
