#!/usr/bin/env bash
# The coopmat2 performance sweep (docs/perf-notes.md): shader variants (tools/gpu/build-coopmat2-variants.sh,
# through VKGEMM_EXPERIMENT_SPIRV), workgroup tiles (VKGEMM_EXPERIMENT_COOPMAT2), operand order and fp16
# accumulation, each timed at the issue's shapes with the driver's register, spill and code-size figures,
# and cuBLAS HGEMM in the same run. Every (variant, operand order, tile) is verified on edge shapes first.
# Run from the repository root on the GPU, build/dev and its variants present (carried); it needs
# build/dev (the dev preset: VKGEMM_EXPERIMENTS on, without which the knobs are not read). Writes $OUT/sweep.txt
# (default out/gpu) a line at a time, so that a run cut short keeps what it measured.
# Usage: tools/gpu/coopmat2-sweep.sh [group...]
#   groups: cublas variants tiles (the default), split acc16 (after split-K came back; the 256x256 fp16-sum
#   tile), order (grouped block order, alignment hint), wide32 (fp32 sums on tiles past 128x256), unroll
#   (the fast path with its own accumulator and an unrolled K loop, against session 3's shader s3), unroll2
#   (with unroll 8 the default: longer loops, block order, wider tiles, smaller products)
set -uo pipefail
cd "$(dirname "$0")/../.."
# The experiment knobs are read only by a developer build: the dev preset (build/dev, VKGEMM_EXPERIMENTS on),
# built here by tools/gpu/build-coopmat2-variants.sh and carried.
[[ -x build/dev/vkgemm ]] || { echo "coopmat2-sweep: build/dev/vkgemm not found (tools/gpu/build-coopmat2-variants.sh builds it)" >&2; exit 2; }
out=${OUT:-out/gpu}
mkdir -p "$out"
bin=$PWD/build/dev/vkgemm
variants=$PWD/build/dev/variants
log=$out/sweep.txt
groups=("$@")
((${#groups[@]})) || groups=(cublas variants tiles)
shapes=("4096 4096 4096" "8192 8192 8192" "4096 512 14336")

say() { echo "$@" | tee -a "$log"; }

# one VARIANT KNOB FLAGS M N K: one timed run, "TFLOP/s registers spill-bytes code-bytes"
one() {
  local variant=$1 knob=$2 flags=$3 m=$4 n=$5 k=$6 env=()
  [[ $variant != main ]] && env+=("VKGEMM_EXPERIMENT_SPIRV=$variants/$variant")
  [[ -n $knob ]] && env+=("VKGEMM_EXPERIMENT_COOPMAT2=$knob")
  env "${env[@]}" "$bin" run --type f16 --out-type f16 --kernel coopmat2 $flags --m "$m" --n "$n" --k "$k" \
    --repeat 20 --warmup 5 --warmup-ms 150 --stats 2>/dev/null | awk '
      /^gpu time:/ { for (i = 1; i <= NF; ++i) if ($i == "GFLOP/s") tf = $(i - 1) / 1000 }
      /Register Count/ { reg = $3 }
      /Binary Size/ { code = $3 }
      /Local Memory Size/ { spill = $4 - 68719476736 }
      END { if (tf == "") print "FAILED"; else printf "%.1f %s %s %s\n", tf, reg, spill, code }'
}

# verify VARIANT KNOB FLAGS: edge shapes, every one checked against the CPU reference
verify() {
  local variant=$1 knob=$2 flags=$3 env=()
  [[ $variant != main ]] && env+=("VKGEMM_EXPERIMENT_SPIRV=$variants/$variant")
  [[ -n $knob ]] && env+=("VKGEMM_EXPERIMENT_COOPMAT2=$knob")
  local c32="--out-type f32"
  [[ $flags == *--f16-accumulate* ]] && c32="--out-type f16"
  for s in "--m 1000 --n 999 --k 1001 $c32" "--m 1024 --n 512 --k 1088 --out-type f16" \
           "--m 300 --n 200 --k 500 --alpha 0.5 --beta 0.25 --batch 2 --out-type f16"; do
    env "${env[@]}" "$bin" run --type f16 --kernel coopmat2 $flags $s --repeat 1 --warmup 0 --warmup-ms 0 --verify \
      >/dev/null 2>&1 || { echo "verification FAILED ($s)"; return 1; }
  done
  echo ok
}

row() {  # row VARIANT KNOB FLAGS: verified, then the three shapes
  local variant=$1 knob=$2 flags=$3 line
  line=$(printf "%-17s %-22s %-22s %-4s" "$variant" "${knob:--}" "${flags:--}" "$(verify "$variant" "$knob" "$flags")")
  for s in "${shapes[@]}"; do line+=$(printf " | %-22s" "$(one "$variant" "$knob" "$flags" $s)"); done
  say "$line"
}

header() {
  say ""
  say "$1"
  local names=() s
  for s in "${shapes[@]}"; do names+=("${s// /x}"); done
  say "$(printf "%-17s %-22s %-22s %-4s | %-22s | %-22s | %-22s" variant knob flags ok "${names[@]}")"
  say "(each shape: TFLOP/s registers spill-bytes code-bytes; C f16, median of 20 after >= 150 ms of warm-up)"
}

say "coopmat2 sweep, commit $(build/dev/vkgemm --version | sed -n 's/.*(commit \(.*\))/\1/p'), $(date -u +%FT%TZ)"
"$bin" devices | sed -n 1,3p | tee -a "$log"
for g in "${groups[@]}"; do
  case $g in
    cublas)
      say ""
      say "cuBLAS HGEMM (torch.matmul, float16, median of 30 after 30 warm-up), TFLOP/s: NN, and NT (B stored n x k)"
      python3 - <<'PY' | tee -a "$log"
import statistics, torch
for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 512, 14336)]:
    a = torch.rand((m, k), device="cuda", dtype=torch.float16) * 2 - 1
    out = []
    for b in [torch.rand((k, n), device="cuda", dtype=torch.float16) * 2 - 1,
              (torch.rand((n, k), device="cuda", dtype=torch.float16) * 2 - 1).t()]:
        for _ in range(30): torch.matmul(a, b)
        torch.cuda.synchronize()
        ts = []
        for _ in range(30):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); torch.matmul(a, b); e.record(); e.synchronize()
            ts.append(s.elapsed_time(e))
        out.append(2.0 * m * n * k / statistics.median(ts) * 1e-9)
    print(f"{m}x{n}x{k}: NN {out[0]:.1f}  NT {out[1]:.1f}")
PY
      ;;
    variants)
      header "Shader variants x operand order, the default tiles (128x256 for the squares, 128x128 for 4096x512)"
      for v in main dont_unroll lean lean_dont_unroll; do
        for f in "" "--trans-b"; do row "$v" "" "$f"; done
      done
      row main "" "--trans-a"
      ;;
    tiles)
      header "Workgroup tiles, K steps and fp16 accumulation"
      for v in main dont_unroll; do
        for knob in "bm=256,bn=128" "bm=128,bn=128" "bm=128,bn=128,inv=128" "bm=128,bn=256,bk=32" \
                    "bm=256,bn=128,bk=32" "bm=64,bn=256"; do
          row "$v" "$knob" ""
        done
        row "$v" "" "--f16-accumulate"
        row "$v" "bm=256,bn=128" "--f16-accumulate"
        row "$v" "bm=256,bn=256,bk=32" "--f16-accumulate"
      done
      ;;
    split)
      header "Split-K: the split-capable shader (main) against the one before it (nosplit), and split tiles"
      row nosplit "splits=1" ""
      row main "" ""
      row main "" "--trans-b"
      shapes=("4096 512 14336")
      for knob in "splits=2" "bm=128,bn=256,splits=2" "bm=128,bn=256,splits=4" "bm=128,bn=128,splits=4"; do
        row main "$knob" ""
      done
      for knob in "bm=256,bn=256,bk=32,splits=4" "bm=256,bn=256,bk=32,splits=8" "bm=128,bn=256,splits=2" "splits=2"; do
        row main "$knob" "--f16-accumulate"
      done
      shapes=("4096 4096 4096" "8192 8192 8192" "4096 512 14336")
      ;;
    acc16)
      header "fp16 sums: 256x256 tiles, K steps, pipelining (and fp32 sums at K step 16)"
      for knob in "" "bk=16" "bk=64" "prefetch=1" "bk=16,prefetch=1" "bm=256,bn=128,bk=32" "bm=128,bn=256,bk=32,prefetch=1"; do
        row main "$knob" "--f16-accumulate"
      done
      for knob in "bk=16" "bk=16,prefetch=1"; do row main "$knob" ""; done
      ;;
    order)
      header "Grouped block order, a 64-element alignment hint, pipelining at 256x256 with fp16 sums"
      for v in main align64; do row "$v" "prefetch=1" "--f16-accumulate"; done
      for knob in "prefetch=1,group=4" "prefetch=1,group=8" "prefetch=1,group=16"; do row main "$knob" "--f16-accumulate"; done
      row main "" ""
      row align64 "" ""
      row main "group=8" ""
      shapes=("4096 512 14336")
      for v in main align64; do row "$v" "bm=256,bn=256,bk=32,splits=4,prefetch=1" "--f16-accumulate"; done
      row main "bm=256,bn=256,bk=32,splits=4" "--f16-accumulate"
      row main "bm=128,bn=256,splits=2,prefetch=1" ""
      row main "bm=128,bn=256,splits=2" ""
      shapes=("4096 4096 4096" "8192 8192 8192" "4096 512 14336")
      ;;
    wide32)
      header "fp32 sums past 128x256: accumulators that cannot stay in registers"
      row main "" ""
      for knob in "bm=192,bn=256" "bm=256,bn=192" "bm=192,bn=256,bk=32" "bm=256,bn=256,bk=32" "bm=192,bn=256,bk=32,prefetch=1"; do
        row main "$knob" ""
      done
      ;;
    unroll)
      header "The fast path's own accumulator and unrolled K loop (main) against session 3's shader (s3)"
      row s3 "" ""
      for knob in "unroll=1" "unroll=2" "unroll=4" "unroll=8" "bk=32,unroll=8"; do row main "$knob" ""; done
      row main "unroll=8" "--trans-b"
      row s3 "" "--f16-accumulate"
      for knob in "" "prefetch=0,unroll=1" "prefetch=0,unroll=4" "prefetch=0,unroll=8" "prefetch=0,unroll=16" \
                  "bm=128,bn=256,bk=64,prefetch=0,unroll=8"; do
        row main "$knob" "--f16-accumulate"
      done
      ;;
    unroll2)
      header "With unroll=8 the default: K loops past 8, block order, wider fp32-sum tiles, fp16-sum K steps"
      for knob in "" "unroll=16" "bk=32,unroll=16" "group=4" "group=8" "bm=192,bn=256" "bm=192,bn=256,bk=32"; do
        row main "$knob" ""
      done
      for knob in "" "unroll=16" "group=8" "bk=64,unroll=4"; do row main "$knob" "--f16-accumulate"; done
      shapes=("1024 1024 1024" "1536 1536 1536" "2048 2048 2048")
      header "Smaller products (64x64, 128x128 and 128x256 tiles by default), unrolled or not"
      for knob in "" "unroll=1" "unroll=4"; do row main "$knob" ""; done
      shapes=("4096 4096 4096" "8192 8192 8192" "4096 512 14336")
      ;;
    *) say "coopmat2-sweep: unknown group $g" ;;
  esac
done
