#!/usr/bin/env bash
# Usage: [FUZZ_SECONDS=N] tools/dev/run-fuzz.sh
# Builds the libFuzzer targets (in the asan preset's build, build/asan: clang, ASan, UBSan, the sanitizer
# pass's own build) and fuzzes the .npy reader and the argument parser for FUZZ_SECONDS each (default 25),
# starting from the corpus committed under tests/fuzz/corpus. New inputs go to build/asan/corpus-*, never
# into the source tree; a crash leaves its input in build/asan/ (libFuzzer prints the path) and fails the
# script.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${FUZZ_SECONDS:-25}"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)" --target fuzz_npy fuzz_args
status=0
for target in npy args; do
  mkdir -p "build/asan/corpus-$target"
  log="build/asan/fuzz_$target.log"
  echo "run-fuzz: fuzz_$target for ${seconds}s (log: $log)"
  if (cd build/asan && ./fuzz_$target -max_total_time="$seconds" -print_final_stats=1 -dict="../../tests/fuzz/$target.dict" \
        -max_len=4096 -timeout=10 -rss_limit_mb=2048 "corpus-$target" "../../tests/fuzz/corpus/$target") >"$log" 2>&1; then
    grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units" "$log" || true
  else
    echo "run-fuzz: fuzz_$target FAILED:" >&2
    grep -E -A30 "ERROR|deadly|Test unit written" "$log" >&2 || tail -40 "$log" >&2
    status=1
  fi
done
((status == 0)) && echo "run-fuzz: no crash in ${seconds}s of each fuzzer"
exit "$status"
