#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_shader_subgroup_basic : enable
// f16 GEMM on subgroup-scope cooperative matrices (VK_KHR_cooperative_matrix): tensor cores on NVIDIA,
// WMMA on AMD, XMX on Intel. Built with VKGEMM_F16; ACC_T is float (or float16_t for f16 accumulation).
//
// A workgroup of WG invocations (WG / SG subgroups of exactly SG lanes: the host requires the subgroup
// size) computes a BM x BN tile of C. Each subgroup owns a WM x WN part of it as (WM/TM) x (WN/TN)
// accumulator fragments of the device's TM x TN x TK shape (chosen at run time from the shapes it lists).
// Per step along K, the BM x BK tile of A and the BK x BN tile of B are staged in shared memory with rows
// 16 bytes longer than the data (the skew puts consecutive rows in different banks for the fragment loads),
// while the next step's tiles are already on their way from global memory into registers (ra, rb).
// Global loads move 8 halves (16 bytes) each when the tile is inside the matrices and rows are 16-byte
// aligned; edge tiles and odd strides load element by element, zeros outside the matrices. C goes out
// through a per-subgroup staging fragment in shared memory, element by element with bounds checks, through
// the interface's store_c (alpha, beta). Batch entry z reads and writes its matrices batch * stride along.
#include "gemm_interface.glsl"

// 16-byte views of A and B for the aligned path; the same bindings as the interface's scalar arrays.
layout(std430, set = 0, binding = 0) readonly buffer MatrixA4 { uvec4 A4[]; };
layout(std430, set = 0, binding = 1) readonly buffer MatrixB4 { uvec4 B4[]; };

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;  // the workgroup size (also local_size_x)
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint WM = 64;   // one subgroup's part of the tile
layout(constant_id = 5) const uint WN = 32;
layout(constant_id = 6) const uint TM = 16;   // the fragment shape
layout(constant_id = 7) const uint TN = 16;
layout(constant_id = 8) const uint TK = 16;
layout(constant_id = 9) const uint SG = 32;   // the subgroup size the pipeline requires

const uint SUBGROUPS_N = BN / WN;
const uint FM = WM / TM;
const uint FN = WN / TN;
const uint SA = BK / 4 + 2;  // row stride of the A tile in f16vec4: BK halves plus the 16-byte skew
const uint SB = BN / 4 + 2;  // row stride of the B tile
const uint A_LOADS = BM * BK / 8 / WG;  // 16-byte chunks each invocation moves per step
const uint B_LOADS = BK * BN / 8 / WG;

shared f16vec4 sh_a[BM * SA];
shared f16vec4 sh_b[BK * SB];
shared ACC_T sh_c[(WG / SG) * TM * TN];  // one fragment of C per subgroup, on its way out

uint a_base, b_base;  // this batch entry's A and B, in elements

uvec4 ra[A_LOADS];
uvec4 rb[B_LOADS];

uvec4 pack8(float16_t v[8]) {
  return uvec4(packFloat2x16(f16vec2(v[0], v[1])), packFloat2x16(f16vec2(v[2], v[3])),
               packFloat2x16(f16vec2(v[4], v[5])), packFloat2x16(f16vec2(v[6], v[7])));
}

// The tiles of step k0 into registers: 16-byte loads when `fast_a`/`fast_b`, else bounds-checked halves.
void fetch(uint k0, uint row0, uint col0, bool fast_a, bool fast_b) {
  [[unroll]] for (uint i = 0; i < A_LOADS; ++i) {
    const uint c = gl_LocalInvocationIndex + i * WG;
    const uint r = row0 + c / (BK / 8);
    const uint k = k0 + (c % (BK / 8)) * 8;
    if (fast_a) {
      ra[i] = A4[(a_base + r * p.lda + k) / 8];
    } else {
      float16_t v[8];
      [[unroll]] for (uint e = 0; e < 8; ++e) {
        v[e] = (r < p.M && k + e < p.K) ? A[a_base + r * p.lda + k + e] : float16_t(0);
      }
      ra[i] = pack8(v);
    }
  }
  [[unroll]] for (uint i = 0; i < B_LOADS; ++i) {
    const uint c = gl_LocalInvocationIndex + i * WG;
    const uint k = k0 + c / (BN / 8);
    const uint n = col0 + (c % (BN / 8)) * 8;
    if (fast_b) {
      rb[i] = B4[(b_base + k * p.ldb + n) / 8];
    } else {
      float16_t v[8];
      [[unroll]] for (uint e = 0; e < 8; ++e) {
        v[e] = (k < p.K && n + e < p.N) ? B[b_base + k * p.ldb + n + e] : float16_t(0);
      }
      rb[i] = pack8(v);
    }
  }
}

void stage() {
  [[unroll]] for (uint i = 0; i < A_LOADS; ++i) {
    const uint c = gl_LocalInvocationIndex + i * WG;
    const uint at = (c / (BK / 8)) * SA + (c % (BK / 8)) * 2;
    sh_a[at] = f16vec4(unpackFloat2x16(ra[i].x), unpackFloat2x16(ra[i].y));
    sh_a[at + 1] = f16vec4(unpackFloat2x16(ra[i].z), unpackFloat2x16(ra[i].w));
  }
  [[unroll]] for (uint i = 0; i < B_LOADS; ++i) {
    const uint c = gl_LocalInvocationIndex + i * WG;
    const uint at = (c / (BN / 8)) * SB + (c % (BN / 8)) * 2;
    sh_b[at] = f16vec4(unpackFloat2x16(rb[i].x), unpackFloat2x16(rb[i].y));
    sh_b[at + 1] = f16vec4(unpackFloat2x16(rb[i].z), unpackFloat2x16(rb[i].w));
  }
}

void main() {
  const uint row0 = gl_WorkGroupID.y * BM;
  const uint col0 = gl_WorkGroupID.x * BN;
  const uint batch = gemm_batch();
  a_base = p.a_offset + batch * p.stride_a;
  b_base = p.b_offset + batch * p.stride_b;
  const uint sg = gl_SubgroupID;
  const uint sg_row = (sg / SUBGROUPS_N) * WM;  // this subgroup's part, inside the tile
  const uint sg_col = (sg % SUBGROUPS_N) * WN;
  // 16-byte loads need 16-byte aligned rows (the binding itself starts 16-byte aligned on the devices
  // that have these extensions) and a tile wholly inside the matrix.
  const bool a_aligned = a_base % 8 == 0 && p.lda % 8 == 0 && row0 + BM <= p.M;
  const bool b_aligned = b_base % 8 == 0 && p.ldb % 8 == 0 && col0 + BN <= p.N;

  coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> acc[FM * FN];
  [[unroll]] for (uint i = 0; i < FM * FN; ++i) {
    acc[i] = coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(0.0);
  }

  fetch(0, row0, col0, a_aligned && BK <= p.K, b_aligned && BK <= p.K);
  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    barrier();  // every subgroup is done reading the previous step's tiles
    stage();
    barrier();
    const uint next = k0 + BK;
    if (next < p.K) {  // uniform: the loads overlap the multiplications below
      fetch(next, row0, col0, a_aligned && next + BK <= p.K, b_aligned && next + BK <= p.K);
    }
    [[unroll]] for (uint kk = 0; kk < BK; kk += TK) {
      coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> fa[FM];
      [[unroll]] for (uint i = 0; i < FM; ++i) {
        coopMatLoad(fa[i], sh_a, (sg_row + i * TM) * SA + kk / 4, SA, gl_CooperativeMatrixLayoutRowMajor);
      }
      [[unroll]] for (uint j = 0; j < FN; ++j) {
        coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> fb;
        coopMatLoad(fb, sh_b, kk * SB + (sg_col + j * TN) / 4, SB, gl_CooperativeMatrixLayoutRowMajor);
        [[unroll]] for (uint i = 0; i < FM; ++i) {
          acc[i * FN + j] = coopMatMulAdd(fa[i], fb, acc[i * FN + j]);
        }
      }
    }
  }

  // Out through shared memory: any size, any alignment, nothing written outside C.
  const uint base = sg * TM * TN;
  [[unroll]] for (uint i = 0; i < FM; ++i) {
    [[unroll]] for (uint j = 0; j < FN; ++j) {
      coopMatStore(acc[i * FN + j], sh_c, base, TN, gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = gl_SubgroupInvocationID; e < TM * TN; e += SG) {
        const uint r = row0 + sg_row + i * TM + e / TN;
        const uint c = col0 + sg_col + j * TN + e % TN;
        if (r < p.M && c < p.N) store_c(batch, r, c, sh_c[base + e]);
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();  // the next fragment overwrites the staging area
    }
  }
}
