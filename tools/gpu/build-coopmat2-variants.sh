#!/usr/bin/env bash
# Compiles variants of shaders/coopmat2.comp to SPIR-V for the performance work (docs/perf-notes.md), into
# build/dev/variants/<variant>/coopmat2_f16_{f32,f16,acc16}.spv, which `VKGEMM_EXPERIMENT_SPIRV=<that
# folder>` puts in place of the embedded ones (tools/gpu/coopmat2-sweep.sh times them). Each variant is
# session 3's shader (commit 11b5e93, one K loop shared by every path) with one change:
#   s3            none: the shader before the fast path got its own accumulator, store and unrolled loop
#   dont_unroll   [[dont_unroll]] on every K loop (the driver otherwise decides; the 128x256 binary is 440 KB)
#   lean          one loop for tiles inside the matrices (no 16-byte-alignment hints, no pipelining code),
#                 the clamped loop for the rest
#   lean_dont_unroll   both
#   align64       the aligned loop only for 128-byte aligned rows and offsets, with strides and offsets
#                 rounded to multiples of 64 (a stronger hint; other alignments take the slow inside loop)
#   nosplit       the shader before split-K came back (commit e759b01), to time the split-capable one against
# Usage: tools/gpu/build-coopmat2-variants.sh   (run from anywhere; compiles each through
# tools/gpu/compile-coopmat2-spirv.sh, which needs build/toolchain's glslangValidator)
# It builds the dev preset (build/dev, the CMake option VKGEMM_EXPERIMENTS on), without which vkgemm ignores
# VKGEMM_EXPERIMENT_SPIRV.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The experiment knobs are read only by a developer build: the dev preset (build/dev, VKGEMM_EXPERIMENTS on).
cmake --preset dev >/dev/null && cmake --build --preset dev --target vkgemm_program >/dev/null
out=build/dev/variants
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git show e759b01:shaders/coopmat2.comp > "$tmp/nosplit.comp"
git show 11b5e93:shaders/coopmat2.comp > "$tmp/s3.comp"
python3 - "$tmp/s3.comp" "$tmp" <<'PY'
import re, sys
src, tmp = sys.argv[1], sys.argv[2]
text = open(src).read()
def dont_unroll(t):
    return re.sub(r"^(\s*)for \(", r"\1[[dont_unroll]] for (", t, flags=re.M)
def lean(t):
    start = t.index("  if (inside && aligned) {")
    end = t.index("  } else if (inside) {")
    return t[:start] + "  if (inside) {" + t[end + len("  } else if (inside) {"):]
def align64(t):
    t2 = t.replace("a_base % 8 == 0 && b_base % 8 == 0 && p.lda % 8 == 0 && p.ldb % 8 == 0",
                   "a_base % 64 == 0 && b_base % 64 == 0 && p.lda % 64 == 0 && p.ldb % 64 == 0")
    t2 = t2.replace("p.lda & ~7u", "p.lda & ~63u").replace("p.ldb & ~7u", "p.ldb & ~63u")
    t2 = t2.replace("const uint a_off = a_base & ~7u, b_off = b_base & ~7u;", "const uint a_off = a_base & ~63u, b_off = b_base & ~63u;")
    assert t2.count("~63u") == 4
    return t2
variants = {"align64": align64(text), "dont_unroll": dont_unroll(text), "lean": lean(text), "lean_dont_unroll": dont_unroll(lean(text))}
for name, body in variants.items():
    assert body != text, name
    open(f"{tmp}/{name}.comp", "w").write(body)
PY

for v in s3 dont_unroll lean lean_dont_unroll nosplit align64; do
  tools/gpu/compile-coopmat2-spirv.sh "$tmp/$v.comp" "$out/$v"
done
