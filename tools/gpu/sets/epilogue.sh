#!/usr/bin/env bash
# Fused epilogues and chained layers on an NVIDIA GPU (docs/design/epilogue.md), from the repository root
# with build/release carried (vkgemm, tests/vkgemm_tests, tools/vkgemm_network_example), results under $OUT
# (default out/gpu/epilogue):
#   tests    the epilogue and chain suites under validation where the layer is there (every kernel the
#            device runs: coopmat and coopmat2 included), and the network example at 320x180 under it
#   gelu     4096^3 f16 (fp32 sums, C f32) on auto, plain against --bias col --act gelu-tanh (verified: the
#            sampled check's witnesses), alternating, 3 rounds of 50 timed products each (JSON per run)
#   network  the example's network (64 -> 64 relu -> 64 relu -> 4 sigmoid, f16, fp32 sums) at 1920x1080:
#            the fused chain against plain products plus separate elementwise passes, 20 frames each
#   plain    f32 and f16 4096^3 on auto without an epilogue, to hold beside docs/results/<device>/result.json:
#            the epilogue's code in every kernel's store must cost the plain product nothing
#   torch    the same network in PyTorch (fp16, fp32 sums: reduced-precision reductions off), bursts of at
#            least 20 ms timed with CUDA events, the median of 7: matmul + bias + activation as separate
#            kernels, and addmm (bias in cuBLAS's epilogue) + activation
# Usage: tools/gpu/run.sh epilogue [phase...]   (default: every phase; about 3 minutes of GPU time)
# A dry run on a CPU device: EPILOGUE_SIZE=128 EPILOGUE_REPEAT=3 EPILOGUE_FRAME=64x36 EPILOGUE_FRAMES=2
# tools/gpu/run.sh epilogue gelu network
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-out/gpu/epilogue}
bin=${VKGEMM_BIN:-build/release/vkgemm}
tests=build/release/tests/vkgemm_tests
example=build/release/tools/vkgemm_network_example
python=${PYTHON:-/opt/torch/.venv/bin/python3}
mkdir -p "$OUT"
phases=("$@")
((${#phases[@]})) || phases=(tests gelu network plain torch)
source tools/gpu/lib/phases.sh

validated_example() {  # the example's own --validate needs the layer; without it, unvalidated
  if have_layer; then
    "$example" "$@" --validate
  else
    "$example" "$@"
  fi
}

# gelu: plain and fused runs alternated, so that a drift of the clock reaches both alike.
gelu() {
  local n=${EPILOGUE_SIZE:-4096} r
  local shape=(--type f16 --m "$n" --n "$n" --k "$n" --repeat "${EPILOGUE_REPEAT:-50}" --warmup 5)
  for r in 1 2 3; do
    "$bin" run "${shape[@]}" --json "$OUT/gelu-plain-$r.json" | grep -E '^(kernel|gpu time)' | sed "s/^/plain $r: /"
    "$bin" run "${shape[@]}" --bias col --act gelu-tanh --verify --json "$OUT/gelu-fused-$r.json" |
      grep -E '^(kernel|gpu time|verify)' | sed "s/^/fused $r: /"
  done
  python3 - "$OUT" <<'EOF'
import json, statistics, sys
out = sys.argv[1]
plain = [json.load(open(f"{out}/gelu-plain-{r}.json"))["median_ms"] for r in (1, 2, 3)]
fused = [json.load(open(f"{out}/gelu-fused-{r}.json")) for r in (1, 2, 3)]
f = [x["median_ms"] for x in fused]
ok = all(x["verified"] for x in fused)
p, q = statistics.median(plain), statistics.median(f)
print(f"{fused[0]['m']}^3 f16 auto: plain {p:.4f} ms, bias+gelu-tanh {q:.4f} ms (medians of 3 rounds' medians): "
      f"{100 * (q / p - 1):+.2f} % (prediction: at most +3 %), fused verified: {ok}")
json.dump({"plain_ms": plain, "fused_ms": f, "overhead_pct": 100 * (q / p - 1), "verified": ok},
          open(f"{out}/gelu-summary.json", "w"))
sys.exit(0 if ok else 1)
EOF
}

plain() {  # the plain products, no epilogue: beside the committed results of the device
  local t
  for t in f32 f16; do
    "$bin" run --type "$t" --m 4096 --n 4096 --k 4096 --repeat 20 --json "$OUT/plain-$t.json" |
      grep -E '^(product|kernel|gpu time)' || return 1
  done
}

torch_network() {
  "$python" - "$OUT" <<'EOF'
import json, statistics, sys
import torch
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False  # fp32 sums, as vkgemm's
rows, dev = 1920 * 1080, "cuda"
g = torch.Generator(device=dev).manual_seed(1)
x = torch.rand((rows, 64), device=dev, generator=g, dtype=torch.float16) * 2 - 1
ws = [(torch.rand((64, n), device=dev, generator=g, dtype=torch.float16) - 0.5) * 0.5 for n in (64, 64, 4)]
bs = [(torch.rand((n,), device=dev, generator=g, dtype=torch.float16) - 0.5) for n in (64, 64, 4)]
acts = [torch.relu, torch.relu, torch.sigmoid]
def separate():
    h = x
    for w, b, f in zip(ws, bs, acts):
        h = f(h @ w + b)
    return h
def addmm():
    h = x
    for w, b, f in zip(ws, bs, acts):
        h = f(torch.addmm(b, h, w))
    return h
def burst_ms(fn):
    """Median over 7 bursts of the per-call time, each burst at least 20 ms of calls between CUDA events."""
    for _ in range(20): fn()
    torch.cuda.synchronize()
    calls, times = 1, []
    while True:  # calls per burst: enough for 20 ms
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(calls): fn()
        e.record(); e.synchronize()
        if s.elapsed_time(e) >= 20.0: break
        calls *= 2
    for _ in range(7):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(calls): fn()
        e.record(); e.synchronize()
        times.append(s.elapsed_time(e) / calls)
    return statistics.median(times), calls
res = {}
for name, fn in (("separate", separate), ("addmm", addmm)):
    ms, calls = burst_ms(fn)
    res[name] = ms
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}: {name}: {ms:.4f} ms per network "
          f"(median of 7 bursts of {calls})")
json.dump(res, open(f"{sys.argv[1]}/torch.json", "w"))
EOF
}

for p in "${phases[@]}"; do
  case $p in
    tests)
      "$bin" devices >"$OUT/devices.txt" 2>&1
      phase tests validation "$tests" --no-version --test-suite=epilogue,chain
      phase example-validated validated_example --size 320x180 --frames 2 ;;
    gelu) phase gelu gelu ;;
    network) phase network "$example" --size "${EPILOGUE_FRAME:-1920x1080}" --frames "${EPILOGUE_FRAMES:-20}" --compare ;;
    plain) phase plain plain ;;
    torch) phase torch torch_network ;;
    *) echo "epilogue.sh: unknown phase $p (tests gelu network plain torch)" >&2; exit 2 ;;
  esac
done
echo "epilogue.sh: $failures phase(s) failed; results in $OUT"
((failures == 0))
