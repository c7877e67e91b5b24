#!/usr/bin/env bash
# tools/gpu/run.sh, the GPU measurements' one entry point, without a GPU: --list names every set under
# tools/gpu/sets/ (run.sh fails when its table and the scripts there disagree), and a set it does not know
# is refused with exit 2 and a sentence naming the known ones, before anything runs. With the program given,
# the `ab` set runs on this machine's device: a product on both sides writes ab.json with both medians and exit
# 0; a product the program refuses (the thin kernel takes no f32) is reported not verified, with exit 1.
# Usage: tests/test_gpu_run.sh SOURCE_DIR [VKGEMM]   (run by CTest, label core)
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

if [[ -n ${2-} ]]; then
  out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
  table=$(OUT=$out "$run" ab --before "$2" --after "$2" --rounds 2 "small: --m 33 --n 17 --k 9 --repeat 2") ||
    { echo "gpu.run: ab on one product failed: $table"; exit 1; }
  python3 - "$out/ab.json" <<'PY' || exit 1
import json, sys
row = json.load(open(sys.argv[1]))["cases"][0]
ok = row["verified"] and len(row["before_ms"]) == 2 and len(row["after_ms"]) == 2 and row["after_over_before"] > 0
print("gpu.run: ab.json", "holds" if ok else "lacks", "both sides' two runs and their ratio:", row)
sys.exit(0 if ok else 1)
PY
  refused=$(OUT=$out "$run" ab --before "$2" --after "$2" --rounds 1 "refused: --m 33 --n 17 --k 9 --kernel thin --type f32" 2>&1)
  status=$?
  [[ $status -eq 1 && $refused == *"NOT VERIFIED"* ]] ||
    { echo "gpu.run: ab on a refused product gave exit $status and: $refused"; exit 1; }
  echo "gpu.run: ab measured both sides, and reported a refused product: $(head -n 1 <<<"$refused")"
fi
