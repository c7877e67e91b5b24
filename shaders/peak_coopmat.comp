#version 450
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// vkgemm peak: cooperative-matrix MMA throughput (engine/src/peak/peak.cpp), subgroup scope
// (VK_KHR_cooperative_matrix). A and B fragments are ELEM_T (float16_t; bfloat16_t with PEAK_BF16; int8_t or
// uint8_t with PEAK_INT8);
// ACC_T (float or float16_t; int or uint) is C's type. The fragment shape TM x TN x TK is specialized at run
// time, so one shader serves every shape a device lists of its types.
//
// Each subgroup loads one A and one B fragment, then runs p.K iterations of UNROLL steps over 4 (ACCS)
// independent accumulators (acc = A * B + acc): 2 * TM * TN * TK * 4 * UNROLL * K FLOPs per subgroup.
// The accumulators' sum is stored, one fragment per subgroup, so none of the work is dead.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;  // the workgroup size (set by name, as every constant)
layout(constant_id = 1) const uint TM = 16;
layout(constant_id = 2) const uint TN = 16;
layout(constant_id = 3) const uint TK = 16;
layout(constant_id = 4) const uint SG = 32;  // the subgroup size

#ifdef PEAK_INT8
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
// The bytes read as 32-bit words, so no 8-bit storage is needed; rows ROW words (64 bytes) apart, beyond
// any int8 fragment's width, so every row starts 16-byte aligned.
layout(std430, set = 0, binding = 0) readonly buffer In { uint src[]; };  // (TM + TK) * ROW words
const uint ROW_A = 16, ROW_B = 16, B_AT = TM * 16;
#define INIT(i) ACC_T(i)
#else
#extension GL_EXT_shader_16bit_storage : require
#ifdef PEAK_BF16
#extension GL_EXT_bfloat16 : require
#endif
layout(std430, set = 0, binding = 0) readonly buffer In { ELEM_T src[]; };  // TM*TK + TK*TN 16-bit floats
const uint ROW_A = TK, ROW_B = TN, B_AT = TM * TK;
#define INIT(i) ACC_T(0.25 * i)
#endif
layout(std430, set = 0, binding = 2) writeonly buffer Out { ACC_T dst[]; };    // TM*TN per subgroup
layout(push_constant) uniform PeakParams {
  layout(offset = 8) uint K;
  layout(offset = 64) float mul;  // 1: scales A by one each step where VARY_A is on
} p;

// A scaled by p.mul (1) before each step: a driver that lowers the MMA to dot products (lavapipe) would
// otherwise compute A * B once, outside the loop (lavapipe read 0.215 TFLOP/s then, 10x its FMA peak; 0.023
// with it). The host turns it on everywhere: one elementwise scale per ACCS MMAs. Not for bf16, whose
// matrices take no arithmetic but the MMA (SPV_KHR_bfloat16); only GPUs list bf16 shapes, and they do not
// hoist the product.
layout(constant_id = 5) const bool VARY_A = true;
const uint UNROLL = 8;

void main() {
  coopmat<ELEM_T, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> a;
  coopmat<ELEM_T, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> b;
  coopMatLoad(a, src, 0, ROW_A, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, src, B_AT, ROW_B, gl_CooperativeMatrixLayoutRowMajor);
  // Each accumulator starts elsewhere: chains that were equal at every step could be computed once.
  coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c0 =
      coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(INIT(0));
  coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c1 =
      coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(INIT(1));
  coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c2 =
      coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(INIT(2));
  coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c3 =
      coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(INIT(3));
  for (uint i = 0; i < p.K; ++i) {
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
#ifndef PEAK_BF16
      if (VARY_A) a = a * ELEM_T(p.mul);
#endif
      c0 = coopMatMulAdd(a, b, c0);
      c1 = coopMatMulAdd(a, b, c1);
      c2 = coopMatMulAdd(a, b, c2);
      c3 = coopMatMulAdd(a, b, c3);
    }
  }
  for (int e = 0; e < c0.length(); ++e) c0[e] += c1[e] + c2[e] + c3[e];
  const uint subgroup = gl_GlobalInvocationID.x / SG;
  coopMatStore(c0, dst, subgroup * TM * TN, TN, gl_CooperativeMatrixLayoutRowMajor);
}
