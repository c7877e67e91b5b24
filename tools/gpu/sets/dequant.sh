#!/usr/bin/env bash
# The dequantization of int8 products and the network example with cooperative matrices, on an NVIDIA GPU
# (docs/design/epilogue.md), from the repository root with build/release carried (vkgemm,
# tests/vkgemm_tests, tools/vkgemm_network_example); results under $OUT (default out/gpu/dequant):
#   tests    the dequant suite under validation where the layer is there: every kernel the device runs,
#            coopmat2's dequantizing variants included (i8 and u8 into f32 and f16, per-tensor and
#            per-column, every activation), and the epilogue suite's coopmat2 case
#   time     4096^3 i8 on auto: into i32 (the plain product), into f16 with --scale tensor, and with --scale
#            col --bias col --act relu (a quantized layer), each verified (the sampled check's witnesses),
#            alternating, 3 rounds of 50 timed products
#   network  tools/examples/network_frame.cpp at 1920x1080, its device now enabling the cooperative-matrix
#            extensions: which kernel each layer runs on, the fused chain against plain products plus
#            elementwise passes (--compare), 20 frames each
# Usage: tools/gpu/run.sh dequant [phase...]   (default: every phase; a few minutes of GPU time)
# A dry run on a CPU device: DEQUANT_SIZE=128 DEQUANT_REPEAT=3 DEQUANT_FRAME=64x36 tools/gpu/run.sh dequant time network
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-out/gpu/dequant}
bin=${VKGEMM_BIN:-build/release/vkgemm}
tests=build/release/tests/vkgemm_tests
example=build/release/tools/vkgemm_network_example
mkdir -p "$OUT"
phases=("$@")
((${#phases[@]})) || phases=(tests time network)
source tools/gpu/lib/phases.sh

suites() {
  local env=()
  have_layer || { echo "(no validation layer: running without it)"; env=(VKGEMM_TEST_VALIDATION=0); }
  env "${env[@]}" "$tests" --no-version --test-suite=dequant || return
  env "${env[@]}" "$tests" --no-version --test-suite=epilogue "--test-case=coopmat2 kernel"
}

timing() {
  local n=${DEQUANT_SIZE:-4096} r
  local shape=(--type i8 --m "$n" --n "$n" --k "$n" --repeat "${DEQUANT_REPEAT:-50}" --warmup 5 --verify)
  for r in 1 2 3; do
    "$bin" run "${shape[@]}" --json "$OUT/i32-$r.json" | grep -E '^(kernel|gpu time|verify)' | sed "s/^/i32 $r: /"
    "$bin" run "${shape[@]}" --out-type f16 --scale tensor --tensor-scale 0.0001 --json "$OUT/tensor-$r.json" |
      grep -E '^(kernel|gpu time|verify)' | sed "s/^/f16 per-tensor $r: /"
    "$bin" run "${shape[@]}" --out-type f16 --scale col --tensor-scale 0.001 --bias col --act relu \
      --json "$OUT/layer-$r.json" | grep -E '^(kernel|gpu time|verify)' | sed "s/^/f16 per-column+bias+relu $r: /"
  done
  python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
rows = {name: [json.load(open(f"{out}/{name}-{r}.json")) for r in (1, 2, 3)] for name in ("i32", "tensor", "layer")}
ms = {name: statistics.median(x["median_ms"] for x in runs) for name, runs in rows.items()}
ok = all(x["verified"] for runs in rows.values() for x in runs)
for name in ("tensor", "layer"):
    print(f"i8 -> f16 {name}: {ms[name]:.4f} ms against i8 -> i32 {ms['i32']:.4f} ms: "
          f"{100 * (ms[name] / ms['i32'] - 1):+.2f} %")
print(f"all verified: {ok}")
json.dump({"median_ms": ms, "verified": ok}, open(f"{out}/time-summary.json", "w"))
sys.exit(0 if ok else 1)
PY
}

network() {
  local args=(--size "${DEQUANT_FRAME:-1920x1080}" --frames 20 --compare)
  if have_layer; then "$example" --size 320x180 --frames 2 --validate || return; fi
  "$example" "${args[@]}"
}

for p in "${phases[@]}"; do
  case $p in
    tests) phase tests suites ;;
    time) phase time timing ;;
    network) phase network network ;;
    *) echo "unknown phase $p (tests, time, network)"; failures=$((failures + 1)) ;;
  esac
done
echo "dequant.sh: $failures phase(s) failed; results in $OUT"
((failures == 0))
