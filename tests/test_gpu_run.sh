#!/usr/bin/env bash
# tools/gpu/run.sh, the GPU measurements' one entry point, without a GPU: --list names every set under
# tools/gpu/sets/ (run.sh fails when its table and the scripts there disagree), and a set it does not know
# is refused with exit 2 and a sentence naming the known ones, before anything runs.
# Usage: tests/test_gpu_run.sh SOURCE_DIR   (run by CTest, label core)
set -uo pipefail
run=${1:?usage: test_gpu_run.sh SOURCE_DIR}/tools/gpu/run.sh
scripts=$(find "$1/tools/gpu/sets" -maxdepth 1 -type f \( -name '*.sh' -o -name '*.py' \) | wc -l)

list=$("$run" --list) || { echo "gpu.run: tools/gpu/run.sh --list failed: $list"; exit 1; }
listed=$(grep -c . <<<"$list")
[[ $listed -eq $scripts && $listed -gt 0 ]] ||
  { echo "gpu.run: --list names $listed sets, tools/gpu/sets/ holds $scripts scripts:"; echo "$list"; exit 1; }
first=$(head -n 1 <<<"$list" | awk '{ print $1 }')

message=$("$run" no-such-set 2>&1)
status=$?
[[ $status -eq 2 && $message == *"no set named 'no-such-set'; the sets are: "*"$first"* ]] ||
  { echo "gpu.run: an unknown set gave exit $status and: $message"; exit 1; }
echo "gpu.run: --list names $listed sets; an unknown set is refused: $message"
