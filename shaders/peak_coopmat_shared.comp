#version 450
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
// vkgemm peak: subgroup-scope MMA (VK_KHR_cooperative_matrix) fed from shared memory, as a GEMM kernel's inner
// loop is (engine/src/peak/peak.cpp, the "fed from shared memory" rows): the ceiling of any kernel that
// stages A and B in shared memory and loads its fragments from there, before global memory is counted.
// f16 A and B; ACC_T (float or float16_t) is C's type; the fragment shape TM x TN x TK is specialized.
//
// A workgroup of 4 subgroups (2 x 2) owns a BM x BN = 8 TM x 8 TN tile; each subgroup a 4 TM x 4 TN part of
// it, 4 x 4 accumulators (64 x 64 at 16 x 16 x 16: the warp tile of the KHR kernel's 128 x 128 and of
// Triton's fastest tiles). Shared memory holds two K steps of KS = 2 TK (A BM x KS, B KS x BN, each row 8
// halves longer than its data so that consecutive rows fall in different banks, as the KHR kernel pads
// them), filled once from the input. Each of p.K iterations reads the step p.mul (1) selects in turn: for
// each of its KS / TK fragment columns, 4 A and 4 B fragments are loaded from shared memory and multiplied
// into the 16 accumulators; then a workgroup barrier, as a kernel needs one per step, which also keeps any
// compiler from hoisting the loads out of the loop. 2 * TM * TN * TK * 16 * KS / TK FLOPs a subgroup an
// iteration. The accumulators' sum is stored, one fragment per subgroup, so none of the work is dead.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;  // 4 subgroups (set by name, as every constant)
layout(constant_id = 1) const uint TM = 16;
layout(constant_id = 2) const uint TN = 16;
layout(constant_id = 3) const uint TK = 16;
layout(constant_id = 4) const uint SG = 32;  // the subgroup size

const uint RM = 4, RN = 4;                       // a subgroup's fragments down and across
const uint BM = 2 * RM * TM, BN = 2 * RN * TN;   // the workgroup's tile
const uint KS = 2 * TK;                          // a step's depth
const uint PAD = 8;                              // halves past each row's data
const uint LDA = KS + PAD, LDB = BN + PAD;       // shared rows, in halves
const uint STEP_A = BM * LDA, STEP_B = KS * LDB;  // one step's halves

layout(std430, set = 0, binding = 0) readonly buffer In { float16_t src[]; };  // at least TM * TK halves
layout(std430, set = 0, binding = 2) writeonly buffer Out { ACC_T dst[]; };    // TM * TN per subgroup
layout(push_constant) uniform PeakParams {
  layout(offset = 8) uint K;
  layout(offset = 64) float mul;  // 1: the step index alternates between the two (i & 1)
} p;

shared float16_t sa[2 * STEP_A];
shared float16_t sb[2 * STEP_B];

#define ACC coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>

void main() {
  for (uint i = gl_LocalInvocationIndex; i < 2 * STEP_A; i += WG) sa[i] = src[i % (TM * TK)];
  for (uint i = gl_LocalInvocationIndex; i < 2 * STEP_B; i += WG) sb[i] = src[i % (TM * TK)];
  barrier();
  const uint subgroup = gl_LocalInvocationIndex / SG;
  const uint row0 = (subgroup / 2) * RM * TM, col0 = (subgroup % 2) * RN * TN;
  ACC acc[RM * RN];
  // Each accumulator starts elsewhere: chains that were equal at every step could be computed once.
  [[unroll]] for (uint f = 0; f < RM * RN; ++f) acc[f] = ACC(ACC_T(0.25 * f));
  const uint select = uint(p.mul);
  for (uint i = 0; i < p.K; ++i) {
    const uint step = i & select;
    [[unroll]] for (uint kk = 0; kk < KS; kk += TK) {
      coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> a[RM];
      coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> b[RN];
      [[unroll]] for (uint r = 0; r < RM; ++r) {
        coopMatLoad(a[r], sa, step * STEP_A + (row0 + r * TM) * LDA + kk, LDA, gl_CooperativeMatrixLayoutRowMajor);
      }
      [[unroll]] for (uint c = 0; c < RN; ++c) {
        coopMatLoad(b[c], sb, step * STEP_B + kk * LDB + col0 + c * TN, LDB, gl_CooperativeMatrixLayoutRowMajor);
      }
      [[unroll]] for (uint r = 0; r < RM; ++r) {
        [[unroll]] for (uint c = 0; c < RN; ++c) acc[r * RN + c] = coopMatMulAdd(a[r], b[c], acc[r * RN + c]);
      }
    }
    barrier();
  }
  [[unroll]] for (uint f = 1; f < RM * RN; ++f) {
    for (int e = 0; e < acc[0].length(); ++e) acc[0][e] += acc[f][e];
  }
  const uint global_subgroup = gl_WorkGroupID.x * (WG / SG) + subgroup;
  coopMatStore(acc[0], dst, global_subgroup * TM * TN, TN, gl_CooperativeMatrixLayoutRowMajor);
}
