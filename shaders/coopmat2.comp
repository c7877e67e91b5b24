#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
// f16 GEMM on workgroup-scope cooperative matrices (VK_NV_cooperative_matrix2). Built with VKGEMM_F16.
//
// The whole workgroup owns one BM x BN accumulator, and A and B go straight from the buffers into BM x BK
// and BK x BN matrices through tensor layouts (the driver stages them through shared memory and schedules
// the tensor-core work itself). Tiles wholly inside the matrices use plain layouts; edge tiles and the last,
// partial step along K use clamped layouts, which read zeros outside the matrix. The result is stored
// through a clamped layout too, which drops the elements outside C: any size, no padding. alpha and beta
// are applied to the whole accumulator (beta * C loaded through the same clamped layout, only when beta is
// not 0); batch entry z reads and writes its matrices batch * stride along.
// With 16-byte aligned rows and offsets the strides and offsets are rounded down to multiples of 8, which
// changes nothing but tells the compiler that wide loads are safe.
#include "gemm_interface.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;
// 1: the aligned inner loop loads step k+1's tiles before multiplying step k's (software pipelining, so
// the loads' latency overlaps the tensor-core work); 0: load, then multiply.
layout(constant_id = 4) const uint PREFETCH = 0;

#define CLAMP gl_CooperativeMatrixClampModeConstantNV
#define MAT_A coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define MAT_B coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>
#define MAT_ACC coopmat<ACC_T, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define MAT_C coopmat<C_T, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>

void main() {
  const uint row0 = gl_WorkGroupID.y * BM;
  const uint col0 = gl_WorkGroupID.x * BN;
  const uint batch = gemm_batch();
  const uint a_base = p.a_offset + batch * p.stride_a;
  const uint b_base = p.b_offset + batch * p.stride_b;
  const uint c_base = p.c_offset + batch * p.stride_c;

  tensorLayoutNV<2> la = createTensorLayoutNV(2);
  tensorLayoutNV<2> lb = createTensorLayoutNV(2);
  tensorLayoutNV<2, CLAMP> la_clamp = createTensorLayoutNV(2, CLAMP);
  tensorLayoutNV<2, CLAMP> lb_clamp = createTensorLayoutNV(2, CLAMP);
  tensorLayoutNV<2, CLAMP> lc = createTensorLayoutNV(2, CLAMP);
  // Dimensions are (rows, columns); strides (row stride, 1): row-major.
  la_clamp = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(la_clamp, p.M, p.K), p.lda, 1);
  lb_clamp = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lb_clamp, p.K, p.N), p.ldb, 1);
  lc = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lc, p.M, p.N), p.ldc, 1);

  MAT_ACC acc = MAT_ACC(0.0);
  uint k0 = 0;
  const bool inside = row0 + BM <= p.M && col0 + BN <= p.N;
  const bool aligned = a_base % 8 == 0 && b_base % 8 == 0 && p.lda % 8 == 0 && p.ldb % 8 == 0;
  if (inside && aligned) {
    la = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(la, p.M, p.K), p.lda & ~7u, 1);
    lb = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lb, p.K, p.N), p.ldb & ~7u, 1);
    const uint a_off = a_base & ~7u, b_off = b_base & ~7u;
    if (PREFETCH != 0 && BK <= p.K) {
      MAT_A a;
      MAT_B b;
      coopMatLoadTensorNV(a, A, a_off, sliceTensorLayoutNV(la, row0, BM, 0, BK));
      coopMatLoadTensorNV(b, B, b_off, sliceTensorLayoutNV(lb, 0, BK, col0, BN));
      for (k0 = BK; k0 + BK <= p.K; k0 += BK) {
        MAT_A a_next;
        MAT_B b_next;
        coopMatLoadTensorNV(a_next, A, a_off, sliceTensorLayoutNV(la, row0, BM, k0, BK));
        coopMatLoadTensorNV(b_next, B, b_off, sliceTensorLayoutNV(lb, k0, BK, col0, BN));
        acc = coopMatMulAdd(a, b, acc);
        a = a_next;
        b = b_next;
      }
      acc = coopMatMulAdd(a, b, acc);
    }
    for (; k0 + BK <= p.K; k0 += BK) {
      MAT_A a;
      MAT_B b;
      coopMatLoadTensorNV(a, A, a_off, sliceTensorLayoutNV(la, row0, BM, k0, BK));
      coopMatLoadTensorNV(b, B, b_off, sliceTensorLayoutNV(lb, k0, BK, col0, BN));
      acc = coopMatMulAdd(a, b, acc);
    }
  } else if (inside) {
    la = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(la, p.M, p.K), p.lda, 1);
    lb = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lb, p.K, p.N), p.ldb, 1);
    for (; k0 + BK <= p.K; k0 += BK) {
      MAT_A a;
      MAT_B b;
      coopMatLoadTensorNV(a, A, a_base, sliceTensorLayoutNV(la, row0, BM, k0, BK));
      coopMatLoadTensorNV(b, B, b_base, sliceTensorLayoutNV(lb, k0, BK, col0, BN));
      acc = coopMatMulAdd(a, b, acc);
    }
  }
  // Edge tiles, and the partial last step of the others: zeros outside the matrices.
  for (; k0 < p.K; k0 += BK) {
    MAT_A a;
    MAT_B b;
    coopMatLoadTensorNV(a, A, a_base, sliceTensorLayoutNV(la_clamp, row0, BM, k0, BK));
    coopMatLoadTensorNV(b, B, b_base, sliceTensorLayoutNV(lb_clamp, k0, BK, col0, BN));
    acc = coopMatMulAdd(a, b, acc);
  }
  if (p.alpha != 1.0) acc = acc * ACC_T(p.alpha);
  if ((p.flags & GEMM_BETA_ZERO) == 0u) {
    MAT_C c0;
    coopMatLoadTensorNV(c0, C, c_base, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
    acc = acc + MAT_ACC(c0) * ACC_T(p.beta);
  }
  MAT_C c = MAT_C(acc);
  coopMatStoreTensorNV(c, C, c_base, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
}
