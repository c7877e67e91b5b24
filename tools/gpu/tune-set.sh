#!/usr/bin/env bash
# Tunes the blocked kernel for one shape set's f32 cases on the GPU (vkgemm tune --shapes), each winner written
# to tuned.json as it is found, for at most SECONDS (an interrupted run keeps what it found); the log and the
# file under $OUT/tune-<set name>.tgz. Usage (device tool; carry .gl and the binary: BINARY, default
# build/release/vkgemm):
#   bash tools/gpu/tune-set.sh SET.json [SECONDS, default 540]
set -u
set_file=$1; seconds=${2:-540}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
name=$(basename "$set_file" .json); R=tune-$name; mkdir -p $R
timeout "$seconds" ${BINARY:-build/release/vkgemm} tune --type f32 --shapes "$set_file" --repeat 10 --out $R/tuned.json \
  > $R/tune.txt 2>$R/tune-stderr.txt
echo "tune $set_file rc $? (124: cut at ${seconds} s)" | tee $R/rc.txt
tar czf "$OUT/$R.tgz" $R
cat $R/tune.txt
