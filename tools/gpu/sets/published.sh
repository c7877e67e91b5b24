#!/usr/bin/env bash
# Groups of the published shape set against cuBLAS (tools/gpu/run.sh bench-vs-cublas, one round per case: the set
# with verification does not fit one device call otherwise); the JSON is rewritten after every case, so a
# call cut short keeps what it measured. Results under $OUT/published-<type>-<name>.tgz. Usage (device tool;
# carry .gl, build/release/vkgemm):
#   tools/gpu/run.sh published TYPE GROUPS NAME [SECONDS, default 560]
set -u
type=$1; groups=$2; name=$3; seconds=${4:-560}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
R=published-$type-$name; mkdir -p $R
build/release/vkgemm --version > $R/version.txt 2>&1
timeout "$seconds" python3 tools/gpu/sets/bench-vs-cublas.py --type "$type" --groups "$groups" --rounds 1 \
  --json $R/vs-cublas.json > $R/vs-cublas.txt 2>&1; echo "published $type $groups rc $?" | tee $R/rc.txt
tar czf "$OUT/$R.tgz" $R
tail -40 $R/vs-cublas.txt
