#version 450
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
// vkgemm peak: cooperative-matrix MMA throughput (engine/src/peak/peak.cpp), subgroup scope
// (VK_KHR_cooperative_matrix). A and B fragments are f16; ACC_T (float or float16_t) is C's type. The
// fragment shape TM x TN x TK is specialized at run time, so one shader serves every shape a device lists.
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

layout(std430, set = 0, binding = 0) readonly buffer In { float16_t src[]; };  // TM*TK + TK*TN halves
layout(std430, set = 0, binding = 2) writeonly buffer Out { ACC_T dst[]; };    // TM*TN per subgroup
layout(push_constant) uniform PeakParams {
  layout(offset = 8) uint K;
  layout(offset = 64) float mul;  // 1: scales A by one each step where VARY_A is on
} p;

// A scaled by p.mul (1) before each step: a driver that lowers the MMA to dot products (lavapipe) would
// otherwise compute A * B once, outside the loop (lavapipe read 0.215 TFLOP/s then, 10x its FMA peak; 0.023
// with it). The host turns it on everywhere: one elementwise scale per ACCS MMAs.
layout(constant_id = 5) const bool VARY_A = true;
const uint UNROLL = 8;

void main() {
  coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> a;
  coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> b;
  coopMatLoad(a, src, 0, TK, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, src, TM * TK, TN, gl_CooperativeMatrixLayoutRowMajor);
  // Each accumulator starts elsewhere: chains that were equal at every step could be computed once.
  coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c0 =
      coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(ACC_T(0.0));
  coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c1 =
      coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(ACC_T(0.25));
  coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c2 =
      coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(ACC_T(0.5));
  coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> c3 =
      coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(ACC_T(0.75));
  for (uint i = 0; i < p.K; ++i) {
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      if (VARY_A) a = a * float16_t(p.mul);
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
