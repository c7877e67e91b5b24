#!/usr/bin/env bash
# Usage: tools/dev/check-cost.sh [SIZE...]   (default 8192)
# The sampled check's host cost at sizes the full reference cannot reach (docs/correctness.md, "The sampled
# check"): for f32 and f16, the check of a right product and of wrong copies of it, each timed, and whether
# each verdict was the expected one. Builds the release preset's vkgemm_check_cost first; exit 1 on a wrong
# verdict.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset release >/dev/null
cmake --build --preset release --target vkgemm_check_cost >/dev/null
status=0
for size in "${@:-8192}"; do
  for type in f32 f16; do
    build/release/tools/vkgemm_check_cost "$type" "$size" || status=1
  done
done
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
exit $status
