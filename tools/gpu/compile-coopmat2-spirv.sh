#!/usr/bin/env bash
# Compiles a version of shaders/coopmat2.comp (a branch's, a worktree's) into the four SPIR-V modules the
# engine embeds for it (f16 inputs: fp32 sums with C f32 or f16, fp16 sums with C f16, and fp16 sums into
# split-K's fp32 workspace), as OUT/coopmat2_f16_<variant>.spv: a dev build (the dev preset,
# VKGEMM_EXPERIMENTS on) started with VKGEMM_EXPERIMENT_SPIRV=OUT runs them in place of its own, so that
# one build times several shader versions in one GPU call. The types are shaders/CMakeLists.txt's.
# Usage: tools/gpu/compile-coopmat2-spirv.sh SHADER.comp OUT   (from the repository root; needs
# build/toolchain's glslangValidator or one on PATH that knows GL_NV_cooperative_matrix2)
set -euo pipefail
src=$1; out=$2
glslang=build/toolchain/prefix/bin/glslangValidator
[[ -x $glslang ]] || glslang=$(command -v glslangValidator)
mkdir -p "$out"
for t in "f32 float float" "f16 float float16_t" "acc16 float16_t float16_t" "acc16_f32 float16_t float"; do
  read -r name acc c <<<"$t"
  "$glslang" -V --target-env vulkan1.3 -I"$PWD/shaders" -DELEM_T=float16_t -DACC_T="$acc" -DC_T="$c" \
    -DVEC_T=f16vec4 -DVKGEMM_F16 -o "$out/coopmat2_f16_$name.spv" "$src" >/dev/null
done
echo "compiled $src into $out"
