#!/usr/bin/env bash
# Benchmark this machine's GPU in one command: installs what is missing, builds Release, runs `vkgemm bench`
# (the default sweep, or the options given) and renders its pictures and Markdown report.
#   tools/run-bench.sh                       results in bench-results/<date>/
#   tools/run-bench.sh --types all --peak-gflops 20000 --device 1
# Writes result.json, result.csv, bench.txt (the table) and, from tools/vkgemm-report, gflops.png/.svg
# and report.md into the folder; VKGEMM_BENCH_OUT chooses another. Exit code: the bench's (see docs/bench.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${VKGEMM_BENCH_OUT:-bench-results/$(date -u +%Y%m%dT%H%M%SZ)}
tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target vkgemm_program
mkdir -p "$out"
status=0
build/release/vkgemm bench --json "$out/result.json" --csv "$out/result.csv" "$@" | tee "$out/bench.txt" \
  || status=${PIPESTATUS[0]}
# A failed case (exit 1) still leaves results worth a picture; an error (2, 3) may leave none.
if [[ -s "$out/result.json" ]]; then
  tools/vkgemm-report "$out/result.json" --out "$out"
  echo "run-bench: results in $out (to contribute them: README, \"Benchmark your GPU\")"
else
  echo "run-bench: no results (see the error above)" >&2
fi
exit "$status"
