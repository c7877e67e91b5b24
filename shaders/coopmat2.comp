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
// through a clamped layout too, which drops the elements outside C: any size, no padding.
// With 16-byte aligned rows and offsets the strides and offsets are rounded down to multiples of 8, which
// changes nothing but tells the compiler that wide loads are safe.
#include "gemm_interface.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;

#define CLAMP gl_CooperativeMatrixClampModeConstantNV
#define MAT_A coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define MAT_B coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>
#define MAT_ACC coopmat<ACC_T, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define MAT_C coopmat<C_T, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>

void main() {
  const uint row0 = gl_WorkGroupID.y * BM;
  const uint col0 = gl_WorkGroupID.x * BN;

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
  const bool aligned = p.a_offset % 8 == 0 && p.b_offset % 8 == 0 && p.lda % 8 == 0 && p.ldb % 8 == 0;
  if (inside && aligned) {
    la = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(la, p.M, p.K), p.lda & ~7u, 1);
    lb = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lb, p.K, p.N), p.ldb & ~7u, 1);
    const uint a_off = p.a_offset & ~7u, b_off = p.b_offset & ~7u;
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
      coopMatLoadTensorNV(a, A, p.a_offset, sliceTensorLayoutNV(la, row0, BM, k0, BK));
      coopMatLoadTensorNV(b, B, p.b_offset, sliceTensorLayoutNV(lb, k0, BK, col0, BN));
      acc = coopMatMulAdd(a, b, acc);
    }
  }
  // Edge tiles, and the partial last step of the others: zeros outside the matrices.
  for (; k0 < p.K; k0 += BK) {
    MAT_A a;
    MAT_B b;
    coopMatLoadTensorNV(a, A, p.a_offset, sliceTensorLayoutNV(la_clamp, row0, BM, k0, BK));
    coopMatLoadTensorNV(b, B, p.b_offset, sliceTensorLayoutNV(lb_clamp, k0, BK, col0, BN));
    acc = coopMatMulAdd(a, b, acc);
  }
  MAT_C c = MAT_C(acc);
  coopMatStoreTensorNV(c, C, p.c_offset, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
}
