#!/usr/bin/env bash
# The GPU checks and measurements in one device call (device time is scarce): the GPU test suites
# that lavapipe cannot run (the cooperative-matrix kernels through the BLAS grid), the fp16 verification
# and timing script (which runs the f16 suite too), then vkgemm against cuBLAS in the same run for f16 and f32.
# Run from the repository root with build/release present; results go under $OUT (default out/gpu).
# Usage: tools/gpu/run.sh check-and-bench [phase...]
#   phases: tests bounds fp16 bench-f16 bench-f16-acc16 bench-f32 stats, and coopmat (the KHR kernel against
#   cuBLAS, every op), peak (vkgemm peak --json), report (vkgemm bench for the report and its picture), f64
#   (the blocked kernel's f64 configurations against the f64 FMA ceiling, tune, and auto verified), and the
#   other types beside cuBLAS on the published set: types-bf16, types-f16-on-bf16 (vkgemm's and cuBLAS's f16
#   on the bf16 cases, for bf16 / f16), types-i8 (against torch._int_mm), types-f64 (4096^3); checked-bench
#   (vkgemm bench of f32, f16, bf16 and i8 at 2048, 4096 and 8192, every case checked, the checks' cost),
#   bf16-grid (coopmat2's bf16 grid without the validation layer and under it, each timed).
# Exit status: 1 when any phase failed (each phase still runs).
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-out/gpu}
mkdir -p "$out"
bin=${VKGEMM_BIN:-build/release/vkgemm}
tests=build/release/tests/vkgemm_tests
commit=$("$bin" --version | sed -n 's/.*(commit \(.*\))/\1/p')  # the binary's own build_commit
phases=("$@")
((${#phases[@]})) || phases=(tests bounds fp16 bench-f16 bench-f16-acc16 bench-f32 coopmat peak stats report)
failures=0

OUT=$out  # where lib/phases.sh's phase logs
source tools/gpu/lib/phases.sh

"$bin" devices > "$out/devices.txt" 2>&1

# The blocked kernel's f64 configurations: those the f32 rules give at twice the registers per element (32
# accumulators: 4x8 or 8x4 per invocation, 48 KiB of shared memory at BK 16), smaller and larger ones around
# them, 8x8 per invocation (64 accumulators, 128 of the 255 registers an invocation may take) at BK 8 and
# 16, the fallback and the tiled kernel. Each at 4096^3 (one JSON line each in f64-configs.jsonl), then the
# fastest three at 1024^3, 2048^3, 8192^3 and 4096^3 with B transposed.
f64n=${F64_SIZE:-4096}  # F64_SIZE and F64_STATS= (no driver statistics): a dry run on a CPU device
f64_configs() {
  local dir=$out/f64-runs n=$f64n stats=${F64_STATS---stats} cfg i=0 best
  mkdir -p "$dir"
  local configs=("64x128x16 4x8 lanes 8" "64x128x16 4x8 lanes 16" "128x64x16 8x4 lanes 4" "128x64x16 8x4 lanes 8"
    "64x128x16 8x4 lanes 8" "128x64x16 4x8 lanes 8" "64x64x16 4x4 lanes 8" "64x64x16 4x4 lanes 16"
    "64x64x16 8x4 lanes 8" "64x64x16 4x8 lanes 8" "64x128x8 8x8 lanes 8" "128x64x8 8x8 lanes 8"
    "128x128x8 8x8 lanes 8" "128x128x8 8x8 lanes 16" "64x64x8 8x4 lanes 8" "64x64x16 8x8 lanes 8"
    "64x128x16 8x8 lanes 8" "128x64x16 8x8 lanes 8")
  for cfg in "${configs[@]}"; do
    i=$((i + 1))
    "$bin" run --type f64 --m "$n" --n "$n" --k "$n" --kernel blocked --config "$cfg split 1" --repeat 5 \
      --warmup-ms 300 $stats --json "$dir/c$i.json" | grep -iE 'GFLOP|register|spill|local memory' || echo "$cfg: failed"
  done
  "$bin" run --type f64 --m "$n" --n "$n" --k "$n" --kernel tiled --tile 32 --repeat 5 --warmup-ms 300 \
    --json "$dir/tiled.json" | grep GFLOP
  # Every run as one JSON line, fastest first; the three fastest blocked configurations.
  best=$(python3 - "$out/f64-configs.jsonl" "$dir"/*.json <<'PY'
import json, sys
rows = sorted((json.load(open(f)) for f in sys.argv[2:]), key=lambda r: -r["gflops"])
with open(sys.argv[1], "a") as out:
    for r in rows:
        out.write(json.dumps(r) + "\n")
        print(f'{r["gflops"]:9.1f} GFLOP/s  {r["kernel"]} {r.get("config", "")}', file=sys.stderr)
print("\n".join([r["config"] for r in rows if r["kernel"] == "blocked"][:3]))
PY
)
  rm -f "$dir"/*.json
  while IFS= read -r cfg; do
    [[ -n $cfg ]] || continue
    for shape in "$((n / 4)) $((n / 4)) $((n / 4))" "$((n / 2)) $((n / 2)) $((n / 2))" "$((n * 2)) $((n * 2)) $((n * 2))" \
      "$n $n $n --trans-b"; do
      set -- $shape
      i=$((i + 1))
      "$bin" run --type f64 --m "$1" --n "$2" --k "$3" ${4:-} --kernel blocked --config "$cfg" --repeat 5 \
        --warmup-ms 300 --json "$dir/c$i.json" | grep GFLOP
    done
  done <<< "$best"
  ls "$dir"/*.json >/dev/null 2>&1 && python3 - "$out/f64-configs.jsonl" "$dir"/*.json <<'PY' 2>&1
import json, sys
with open(sys.argv[1], "a") as out:
    for f in sys.argv[2:]:
        r = json.load(open(f))
        out.write(json.dumps(r) + "\n")
        print(f'{r["m"]}x{r["n"]}x{r["k"]}: {r["gflops"]:9.1f} GFLOP/s  {r.get("config", "")}')
PY
  rm -rf "$dir"
}
# What a GPU with every cooperative-matrix path must run (tests/test_support.cpp).
gpu_expect="kernels=naive,tiled,blocked,coopmat,coopmat2 types=f32,i32,f64,f16 f16acc=coopmat,coopmat2 bf16=coopmat,coopmat2 int8=coopmat,coopmat2 dot8=tiled spirv=coopmat,coopmat2"
for p in "${phases[@]}"; do
  case $p in
    tests)
      # The f16 grid and suites. (The grid's K are at most 67 and its operands unaligned: coopmat2's fast
      # path, its unrolled runs and split-K are the coopmat2 suite's; check-fp16.sh forces split counts.)
      # Also the determinism and statistics suites (same bits run to run; the driver's pipeline statistics)
      # and the cooperative-matrix kernels' exact small-integer products (K 2048 through the fast path); the
      # narrow suite: bf16 and int8 on the SIMT kernels, and bf16 C rounded bit for bit by every kernel's store.
      # The support suite asserts that this GPU runs every kernel, type and fp16-sum path (VKGEMM_TEST_EXPECT).
      phase tests validation env VKGEMM_TEST_EXPECT="$gpu_expect" bash -c "$tests --test-suite=blas '--test-case=grid f16*' && $tests '--test-suite=support,f16,narrow,coopmat,coopmat2,coopmat config,bounds' && $tests '--test-suite=determinism,statistics'" ;;
    peak) phase peak "$bin" peak --json "$out/peak.json" ;;
    coopmat)
      # The portable KHR kernel beside cuBLAS: every op combination at 4096^3, and 4096x512x14336.
      phase coopmat python3 tools/gpu/sets/bench-vs-cublas.py --type f16 --kernel coopmat --ops nn,nt,tn,tt --shapes 4096 \
        --json "$out/coopmat-ops.json" &&
        phase coopmat-skinny python3 tools/gpu/sets/bench-vs-cublas.py --type f16 --kernel coopmat --shapes 4096x512x14336 \
          --json "$out/coopmat.json" ;;
    report)
      # vkgemm bench's sweep (every kernel, f32 and f16, verified up to 2048^3) for the report and its picture.
      phase report "$bin" bench --sizes 256:8192:x2 --types f32,f16 --kernels blocked,coopmat,coopmat2,tiled \
        --latency-sizes 16,64,256 --json "$out/bench.json" --no-progress ;;
    bounds)
      # The reference's model bounds (reference.hpp) against real sums: how far each product stands from its
      # allowance, fp16 and fp32 sums, K 1024 to 14336, split and unsplit.
      phase bounds bash -c "set -o pipefail
        for k in 1024 4096 14336; do
          for f in '--kernel coopmat2 --f16-accumulate' '--kernel coopmat2 --out-type f32' '--kernel coopmat2 --out-type f16' '--kernel coopmat --out-type f32'; do
            echo \"== f16 1024x512x\$k \$f\"; $bin run --type f16 \$f --m 1024 --n 512 --k \$k --repeat 1 --warmup 0 --verify | grep -E 'kernel|verify' || exit 1
          done
          echo \"== f32 1024x512x\$k\"; $bin run --type f32 --m 1024 --n 512 --k \$k --repeat 1 --warmup 0 --verify | grep -E 'kernel|verify' || exit 1
        done
        echo '== f16 4096x512x14336 fp16 sums'; $bin run --type f16 --f16-accumulate --m 4096 --n 512 --k 14336 --repeat 1 --warmup 0 --verify | grep -E 'kernel|verify' || exit 1
        echo '== f16 4096x512x14336 C f32'; $bin run --type f16 --out-type f32 --m 4096 --n 512 --k 14336 --repeat 1 --warmup 0 --verify | grep -E 'kernel|verify' || exit 1" ;;
    fp16) phase fp16 tools/gpu/sets/check-fp16.sh ;;
    bench-f16) phase bench-f16 python3 tools/gpu/sets/bench-vs-cublas.py --type f16 \
                 --json "$out/bench-f16.json" ;;
    bench-f16-acc16) phase bench-f16-acc16 python3 tools/gpu/sets/bench-vs-cublas.py --type f16 --f16-accumulate \
                 --json "$out/bench-f16-acc16.json" ;;
    bench-f32) phase bench-f32 python3 tools/gpu/sets/bench-vs-cublas.py --json "$out/bench-f32.json" ;;
    stats)
      # What limits the kernels, from the driver: registers, shared memory, spills per pipeline.
      phase stats bash -c "
        $bin run --m 4096 --n 4096 --k 4096 --stats --repeat 1 --warmup 0 &&
        $bin run --m 127 --n 4096 --k 4096 --stats --repeat 1 --warmup 0 &&
        $bin run --m 1024 --n 1024 --k 1024 --type f64 --kernel blocked --stats --repeat 1 --warmup 0 &&
        $bin run --m 4096 --n 4096 --k 4096 --type f16 --kernel coopmat --stats --repeat 1 --warmup 0 &&
        $bin run --m 4096 --n 4096 --k 4096 --type f16 --kernel coopmat2 --stats --repeat 1 --warmup 0 &&
        $bin run --m 4096 --n 4096 --k 4096 --type f16 --f16-accumulate --kernel coopmat2 --stats --repeat 1 --warmup 0 &&
        $bin run --m 4096 --n 512 --k 14336 --type f16 --f16-accumulate --kernel coopmat2 --stats --repeat 1 --warmup 0" ;;
    f64)
      # f64 at its ceiling (compare with peak's f64 FMA row): each configuration at 4096^3 with the driver's
      # registers and spills (NVIDIA's Local Memory Size reads 2^36 plus the bytes an invocation keeps in local
      # memory), the fastest three at the other sizes, a tune, and auto verified with the built-in table and
      # with the tuned file.
      phase f64-configs f64_configs
      phase f64-tune timeout 150 "$bin" tune --type f64 --sizes $((f64n / 2)) "$f64n" --quick --out "$out/tuning-f64.json"
      phase f64-auto "$bin" run --type f64 --m "$f64n" --n "$f64n" --k "$f64n" --repeat 10 --verify
      phase f64-auto-tuned env VKGEMM_TUNING_FILE="$out/tuning-f64.json" \
        "$bin" run --type f64 --m "$f64n" --n "$f64n" --k "$f64n" --repeat 10 --verify ;;
    checked-bench)
      # Every case checked (the full reference up to 2048^3, the sampled check above) at the sizes whose rows
      # were "unverified" before the sampled check; the summary's checks line gives their share of the wall
      # time. auto alone: naive and tiled at 8192^3 would take the call's time.
      phase checked-bench "$bin" bench --types f32,f16,bf16,i8 --sizes 2048,4096,8192 --kernels auto \
        --latency-sizes none --json "$out/checked-bench.json" --no-progress ;;
    bf16-grid)
      # coopmat2's bf16 grid, without the validation layer and then under it (each bounded), each timed: where
      # its time goes when it runs past a call's limit under the layer.
      phase bf16-grid-plain timeout 150 env VKGEMM_TEST_VALIDATION=0 "$tests" --test-suite=coopmat2 \
        "--test-case=fast path for bf16*" -d
      phase bf16-grid-validated timeout 240 "$tests" --test-suite=coopmat2 "--test-case=fast path for bf16*" -d ;;
    types-bf16) phase types-bf16 python3 tools/gpu/sets/bench-vs-cublas.py --type bf16 --rounds 1 --json "$out/published-bf16.json" ;;
    types-f16-on-bf16) phase types-f16-on-bf16 python3 tools/gpu/sets/bench-vs-cublas.py --type f16 --cases-of bf16 --rounds 1 \
                         --json "$out/f16-on-bf16-cases.json" ;;
    types-i8) phase types-i8 python3 tools/gpu/sets/bench-vs-cublas.py --type i8 --rounds 1 --json "$out/published-i8.json" ;;
    types-f64) phase types-f64 python3 tools/gpu/sets/bench-vs-cublas.py --type f64 --shapes 4096 --rounds 1 \
                 --json "$out/f64.json" ;;
    *) echo "check-and-bench: unknown phase $p"; failures=$((failures + 1)) ;;
  esac
done
echo "check-and-bench: commit $commit, $failures phase(s) failed"
((failures == 0))
