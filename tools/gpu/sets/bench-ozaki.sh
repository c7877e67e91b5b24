#!/bin/bash
# The emulated f64/f32 product (--kernel ozaki, docs/design/ozaki.md) on an NVIDIA GPU, from the repository
# root with build/release carried, results under $OUT (default out/gpu/ozaki):
#   devices   whether the device can (vkgemm devices' "emulated f64/f32" line)
#   run       f64 and f32 at 4096^3 and 8192^3: ozaki, auto with --precision emulated, and the native auto,
#             each verified then timed (JSON per run); 5 and 20 moduli at 4096^3 split the time between the
#             products (which scale with the moduli) and the passes (which barely do)
#   spread    f64 4096^3 with rows of A and columns of B scaled by 2^U(-20, 20), from .npy files (judged by
#             the worst-case bound), ozaki and native
#   distributions  f64 4096^3 on NumPy's standard normal, Student t (5 and 3) and uniform(-1, 1) inputs: native,
#             the default ozaki (the span guard chooses the moduli, verified) and fixed --moduli 15 and 16
#   cublas    tools/gpu/run.sh bench-vs-cublas at 4096 and 8192: f64 (ozaki and auto) against DGEMM, f32 (ozaki)
#             against SGEMM
#   stats     the driver's statistics of every pass (`vkgemm run --stats`, f64 and f32 at 512^3, and past one K
#             chunk); fails where a split, merge, guard or arm pass keeps local memory (arrays not in registers:
#             a loop the driver left rolled, which cost the merge three times its arithmetic; docs/design/ozaki.md)
# Usage: tools/gpu/run.sh bench-ozaki [phase...]   (default: every phase; one device call is 10 minutes at most:
# run `devices run` and `spread cublas` in two calls if one runs long)
set -u
OUT=${OUT:-out/gpu/ozaki}
VKGEMM=${VKGEMM:-build/release/vkgemm}
mkdir -p "$OUT"
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(devices stats run spread cublas)
status=0

run() {  # run NAME ARGS...: one vkgemm run, its output and JSON kept
  local name=$1
  shift
  echo "== $name: vkgemm run $*" | tee -a "$OUT/run.txt"
  "$VKGEMM" run "$@" --json "$OUT/$name.json" 2>&1 | tee -a "$OUT/run.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}

for phase in "${phases[@]}"; do
  case $phase in
    devices)
      "$VKGEMM" devices | tee "$OUT/devices.txt" | grep -E "^[^ ]|emulated" ;;
    run)
      for t in f64 f32; do
        for s in 4096 8192; do
          shape=(--type "$t" --m "$s" --n "$s" --k "$s" --repeat 20)
          check=(--verify)
          # 8192^3 too: above 2048^3 --verify is the sampled check (docs/correctness.md)
          run "$t-$s-ozaki" "${shape[@]}" --kernel ozaki --verify
          run "$t-$s-auto-emulated" "${shape[@]}" --precision emulated "${check[@]}"
          run "$t-$s-native" "${shape[@]}" "${check[@]}"
        done
        for moduli in 5 20; do
          run "$t-4096-ozaki-$moduli" --type "$t" --m 4096 --n 4096 --k 4096 --repeat 20 --kernel ozaki --moduli "$moduli"
        done
      done ;;
    spread)
      python3 - "$OUT" <<'EOF'
import sys
import numpy as np
rng = np.random.default_rng(1)
n = 4096
a = rng.uniform(-1, 1, (n, n)) * np.exp2(rng.integers(-20, 21, (n, 1)))
b = rng.uniform(-1, 1, (n, n)) * np.exp2(rng.integers(-20, 21, (1, n)))
np.save(f"{sys.argv[1]}/spread-a.npy", a)
np.save(f"{sys.argv[1]}/spread-b.npy", b)
EOF
      run spread-ozaki --a "$OUT/spread-a.npy" --b "$OUT/spread-b.npy" --kernel ozaki --repeat 20 --verify
      run spread-native --a "$OUT/spread-a.npy" --b "$OUT/spread-b.npy" --repeat 20 --verify
      rm -f "$OUT"/spread-*.npy ;;
    distributions)
      python3 - "$OUT" <<'EOF'
import sys
import numpy as np
r = np.random.default_rng(12)
draws = {"normal": r.standard_normal, "t5": lambda s: r.standard_t(5, s), "t3": lambda s: r.standard_t(3, s),
         "uniform": lambda s: r.uniform(-1, 1, s)}
for name, draw in draws.items():
    for side in "ab":
        np.save(f"{sys.argv[1]}/{name}-{side}.npy", draw((4096, 4096)))
EOF
      for inputs in normal t5 t3 uniform; do
        files=(--a "$OUT/$inputs-a.npy" --b "$OUT/$inputs-b.npy" --repeat 10 --warmup-ms 200)
        run "$inputs-native" "${files[@]}"
        run "$inputs-ozaki" "${files[@]}" --kernel ozaki --verify
        for moduli in 15 16; do run "$inputs-ozaki-$moduli" "${files[@]}" --kernel ozaki --moduli "$moduli"; done
        rm -f "$OUT/$inputs"-[ab].npy
      done ;;
    cublas)
      tools/gpu/run.sh bench-vs-cublas --type f64 --shapes 4096 8192 --kernel ozaki --rounds 3 \
        --json "$OUT/cublas-f64-ozaki.json" || status=1
      tools/gpu/run.sh bench-vs-cublas --type f64 --shapes 4096 8192 --rounds 3 \
        --json "$OUT/cublas-f64-native.json" || status=1
      tools/gpu/run.sh bench-vs-cublas --type f32 --shapes 4096 8192 --kernel ozaki --rounds 3 \
        --json "$OUT/cublas-f32-ozaki.json" || status=1 ;;
    stats)
      for t in f64 f32; do
        for k in 512 140000; do
          if ! "$VKGEMM" run --type "$t" --m 512 --n 512 --k "$k" --kernel ozaki --stats \
              --json "$OUT/stats-$t-$k.json" > "$OUT/stats-$t-$k.txt" 2>&1; then
            if grep -q "pipeline statistics need" "$OUT/stats-$t-$k.txt"; then
              echo "stats: SKIPPED: the device reports no pipeline statistics ($OUT/stats-$t-$k.txt)"
            else
              echo "stats: $t k $k failed: $(tail -n 1 "$OUT/stats-$t-$k.txt")"
              status=1
            fi
            continue
          fi
          python3 - "$OUT/stats-$t-$k.json" <<'EOF' || status=1
import json
import sys
run = json.load(open(sys.argv[1]))
# NVIDIA's driver reports 2^36 plus the bytes (docs/design/coopmat2.md): the low word is the bytes.
kept = sorted({(s["shader"], s["value"] % 2**32) for s in run["pipeline_statistics"]
               if s["name"] == "Local Memory Size" and s["shader"].startswith("ozaki_") and s["value"] % 2**32})
for shader, size in kept:
    print(f"stats: {shader} keeps {size} bytes of local memory a thread ({sys.argv[1]})")
print(f"stats: {sys.argv[1]}: {'FAILED' if kept else 'no emulation pass keeps local memory'}")
sys.exit(1 if kept else 0)
EOF
        done
      done ;;
    *)
      echo "unknown phase $phase (devices, run, spread, distributions, cublas, stats)" >&2
      exit 2 ;;
  esac
done
exit $status
