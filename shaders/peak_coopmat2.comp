#version 450
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
// vkgemm peak: workgroup-scope cooperative-matrix MMA throughput (VK_NV_cooperative_matrix2), the ceiling of
// the coopmat2 kernel (engine/src/peak/peak.cpp). A and B are f16; ACC_T (float or float16_t) is C's type.
// The whole workgroup owns one BM x BN accumulator, as the coopmat2 kernel's tiles do (the host passes the
// kernel's large tile), and the driver splits each MMA among its subgroups.
//
// Each workgroup loads one BM x BK A and one BK x BN B, then runs p.K iterations of UNROLL steps of
// acc = A * B + acc: 2 * BM * BN * BK * UNROLL * K FLOPs per workgroup. Every workgroup stores its accumulator
// (the same values, to the same place), so none of the work is dead.
// PEAK_LOADS: A and B loaded again every step (from the same small buffer, which the caches hold), as the
// coopmat2 kernel loads each K step's tiles: the MMA as its loads into workgroup-scope matrices feed it.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;  // the workgroup size (set by name, as every constant)
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 256;
layout(constant_id = 3) const uint BK = 64;

layout(std430, set = 0, binding = 0) readonly buffer In { float16_t src[]; };  // BM*BK + BK*BN halves
layout(std430, set = 0, binding = 2) writeonly buffer Out { ACC_T dst[]; };    // BM*BN
layout(push_constant) uniform PeakParams {
  layout(offset = 8) uint K;
  layout(offset = 64) float mul;  // 1: scales A by one each iteration where VARY_A is on; PEAK_LOADS: its 0
} p;

// A scaled by p.mul (1) once a loop iteration: no driver can hoist A * B out of the loop. Not before every
// step, as peak_coopmat.comp does a fragment: an elementwise operation on a workgroup-scope A costs as much as
// the MMA it feeds (with fp32 sums the row read half the MMA's rate; docs/design/coopmat2.md).
layout(constant_id = 5) const bool VARY_A = true;
const uint UNROLL = 8;

void main() {
  coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a;
  coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> b;
  coopMatLoad(a, src, 0, BK, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, src, BM * BK, BN, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<ACC_T, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> c =
      coopmat<ACC_T, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(ACC_T(0.0));
#ifdef PEAK_LOADS
  const uint zero = uint(p.mul) - 1u;  // 0, unknown to the compiler: the loads stay in the loop
  for (uint i = 0; i < p.K; ++i) {
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      coopMatLoad(a, src, zero * (i * UNROLL + u), BK, gl_CooperativeMatrixLayoutRowMajor);
      coopMatLoad(b, src, BM * BK + zero * (i * UNROLL + u), BN, gl_CooperativeMatrixLayoutRowMajor);
      c = coopMatMulAdd(a, b, c);
    }
  }
#else
  for (uint i = 0; i < p.K; ++i) {
    if (VARY_A) a = a * float16_t(p.mul);
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      c = coopMatMulAdd(a, b, c);
    }
  }
#endif
  coopMatStore(c, dst, 0, BN, gl_CooperativeMatrixLayoutRowMajor);
}
