// The interface every vkgemm GEMM kernel shares with the host (engine/src/kernels/push_constants.hpp).
// Built once per element type: ELEM_T is the stored type of A and B, ACC_T the accumulator, C_T the stored
// type of C (ELEM_T unless given: f16 inputs give f32 or f16). VKGEMM_F16 turns on 16-bit types.
// Row-major: element (r, c) of A lives at A[a_offset + r * lda + c].
#ifdef VKGEMM_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#endif
#ifndef C_T
#define C_T ELEM_T
#endif

layout(std430, set = 0, binding = 0) readonly buffer MatrixA { ELEM_T A[]; };
layout(std430, set = 0, binding = 1) readonly buffer MatrixB { ELEM_T B[]; };
layout(std430, set = 0, binding = 2) writeonly buffer MatrixC { C_T C[]; };

layout(push_constant) uniform GemmParams {
  uint M;          // rows of A and C
  uint N;          // columns of B and C
  uint K;          // columns of A, rows of B
  uint lda;        // row stride of A, in elements
  uint ldb;
  uint ldc;
  uint a_offset;   // first element of each matrix inside its binding, in elements
  uint b_offset;
  uint c_offset;
  uint k_split;       // split-K: the K range of one slice (K when not split)
  uint split_stride;  // split-K: elements between the slices' partial results
  uint flags;         // GEMM_VEC_*: which operands allow 4-element vector access
} p;

// lda (ldb, ldc) and the offset of A (B, C) are multiples of 4: vec4 loads (stores) are aligned.
const uint GEMM_VEC_A = 8u;
const uint GEMM_VEC_B = 16u;
const uint GEMM_VEC_C = 32u;
