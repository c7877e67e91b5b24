// The binary interface between the host and every GEMM kernel, written once for both sides: the push-constant
// block, its flag bits and each kernel's specialization-constant ids. Included by gemm_interface.glsl (and so
// by every .comp, through GL_GOOGLE_include_directive) and by engine/src/kernels/push_constants.hpp; the
// preprocessor is the only language the two share, so this file holds nothing but #defines.
#ifndef VKGEMM_GEMM_ABI_H
#define VKGEMM_GEMM_ABI_H

// ---- flag bits of the push constants' `flags` ----
#define GEMM_TRANS_A 1u    // op(A) = A^T: element (row, k) lives at k * lda + row
#define GEMM_TRANS_B 2u    // op(B) = B^T: element (k, col) lives at col * ldb + k
#define GEMM_BETA_ZERO 4u  // beta == 0: C is written, never read (a NaN in C must not leak)
// lda (ldb, ldc), the offset and the batch stride of A (B, C) are multiples of 4: vec4 access is aligned.
#define GEMM_VEC_A 8u
#define GEMM_VEC_B 16u
#define GEMM_VEC_C 32u

// ---- the push-constant block ----
// Its 32-bit unsigned fields in order, as an X-macro: FIELD(name) once per field. The GLSL block and the C++
// struct both expand it, so neither can gain, lose or reorder a field alone.
#define GEMM_PUSH_UINT_FIELDS(FIELD)                                                                               \
  FIELD(M)            /* rows of op(A) and C */                                                                    \
  FIELD(N)            /* columns of op(B) and C */                                                                 \
  FIELD(K)            /* columns of op(A), rows of op(B); 0 when alpha == 0 (A and B are then not read) */         \
  FIELD(lda)          /* row stride of the stored A, in elements */                                                \
  FIELD(ldb)                                                                                                       \
  FIELD(ldc)                                                                                                       \
  FIELD(a_offset)     /* first element of each matrix inside its binding, in elements */                          \
  FIELD(b_offset)                                                                                                  \
  FIELD(c_offset)                                                                                                  \
  FIELD(stride_a)     /* elements from one batch entry to the next; 0 broadcasts the operand */                    \
  FIELD(stride_b)                                                                                                  \
  FIELD(stride_c)                                                                                                  \
  FIELD(batch)        /* batch entries (the grid's z dimension) */                                                 \
  FIELD(flags)        /* GEMM_TRANS_A | GEMM_TRANS_B | GEMM_BETA_ZERO | GEMM_VEC_* */                               \
  FIELD(k_split)      /* split-K: the K range of one slice (K, at least 1, when not split) */                      \
  FIELD(split_stride) /* split-K: elements between the partial results of consecutive slices */
// After the 16 fields (64 bytes): alpha then beta, each in the shader's SCALAR_T (float, int or double; 8
// bytes each at most), so the block is 80 bytes at most, inside the 128 every device guarantees.
#define GEMM_PUSH_SCALARS_OFFSET 64
#define GEMM_PUSH_BYTES 80

// ---- specialization-constant ids, per kernel ----
// naive.comp: the workgroup's sides (local_size_x_id, local_size_y_id).
#define NAIVE_SC_WG_X 0
#define NAIVE_SC_WG_Y 1
// tiled.comp: the square tile's side (also both workgroup sides).
#define TILED_SC_TILE 0
// blocked.comp: the block, thread tile, lane layout, workgroup size, grouped order, A- and B-tile padding,
// and the transposes (known when the pipeline is built).
#define BLOCKED_SC_BM 0
#define BLOCKED_SC_BN 1
#define BLOCKED_SC_BK 2
#define BLOCKED_SC_TM 3
#define BLOCKED_SC_TN 4
#define BLOCKED_SC_LANES_N 5
#define BLOCKED_SC_THREADS 6
#define BLOCKED_SC_GROUP_M 10
#define BLOCKED_SC_A_PAD 11
#define BLOCKED_SC_TRANS_A 12
#define BLOCKED_SC_TRANS_B 13
#define BLOCKED_SC_B_PAD 14
// coopmat.comp: workgroup size, tile, one subgroup's part of it, the fragment shape, the subgroup size,
// transposes known at build, the fast loop's unrolling, shared-memory buffers, grouped order.
#define COOPMAT_SC_WG 0
#define COOPMAT_SC_BM 1
#define COOPMAT_SC_BN 2
#define COOPMAT_SC_BK 3
#define COOPMAT_SC_WM 4
#define COOPMAT_SC_WN 5
#define COOPMAT_SC_TM 6
#define COOPMAT_SC_TN 7
#define COOPMAT_SC_TK 8
#define COOPMAT_SC_SG 9
#define COOPMAT_SC_TRANS_A 10
#define COOPMAT_SC_TRANS_B 11
#define COOPMAT_SC_UNROLL 12
#define COOPMAT_SC_BUFFERS 13
#define COOPMAT_SC_GROUP_M 14
// coopmat2.comp: workgroup size, tile, software pipelining, transposes known at build, grouped order, unroll.
#define COOPMAT2_SC_WG 0
#define COOPMAT2_SC_BM 1
#define COOPMAT2_SC_BN 2
#define COOPMAT2_SC_BK 3
#define COOPMAT2_SC_PREFETCH 4
#define COOPMAT2_SC_TRANS_A 5
#define COOPMAT2_SC_TRANS_B 6
#define COOPMAT2_SC_GROUP_M 7
#define COOPMAT2_SC_UNROLL 8

#endif  // VKGEMM_GEMM_ABI_H
