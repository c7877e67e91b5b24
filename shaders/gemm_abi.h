// The binary interface between the host and every GEMM kernel, written once for both sides: the push-constant
// block and its flag bits, and the constants a kernel and its host code must agree on. (Each kernel's specialization-constant ids are its shader's own: the host sets
// them by the names the shader declares, kernels/registry.hpp's SpecConstant.) Included by gemm_interface.glsl (and so
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
  FIELD(split_stride) /* split-K (or a C through the workspace): elements between consecutive slices' sums; 0: none */
// After the 16 fields (64 bytes): alpha then beta, each in the shader's SCALAR_T (float, int or double; 8
// bytes each at most); then, at 80, the epilogue's two words; at 88, its two parameters, each in the
// epilogue's type (epilogue.glsl's EPI_T: double for f64 sums, else float; 8 bytes each at most, so that an
// f64 product's slope and bounds are doubles, not the floats nearest them); at 104, the dequantization's two
// words (below). The block is 112 bytes, inside the 128 every device guarantees.
#define GEMM_PUSH_SCALARS_OFFSET 64
#define GEMM_PUSH_EPILOGUE_OFFSET 80
#define GEMM_PUSH_ACT_OFFSET 88
#define GEMM_PUSH_SCALE_OFFSET 104
#define GEMM_PUSH_BYTES 112

// ---- the fused epilogue (epilogue.glsl; vkgemm::Epilogue in blas.hpp) ----
// The word `epilogue`: the activation in its low 4 bits, the bias's broadcast and its stored type above.
// 0 is no epilogue at all: the stores are the plain product's. `bias_offset` is the first bias element
// inside its binding (3), in elements; `act_a` and `act_b` the activation's parameters in the epilogue's type
// (leaky ReLU's slope in act_a, clamp's lo and hi).
#define GEMM_ACT_MASK 15u
#define GEMM_ACT_NONE 0u
#define GEMM_ACT_RELU 1u
#define GEMM_ACT_LEAKY_RELU 2u
#define GEMM_ACT_GELU_TANH 3u
#define GEMM_ACT_GELU_ERF 4u
#define GEMM_ACT_SILU 5u
#define GEMM_ACT_SIGMOID 6u
#define GEMM_ACT_TANH 7u
#define GEMM_ACT_CLAMP 8u
#define GEMM_BIAS_COLUMN 16u   // bias[col] added to every row (n values, in the kernel's row-major problem)
#define GEMM_BIAS_ROW 32u      // bias[row] added to every column (m values)
#define GEMM_BIAS_TYPE_SHIFT 6u  // the bias's stored type in bits 6-7: 0 f32, 1 f16, 2 bf16, 3 f64
#define GEMM_BIAS_F32 0u
#define GEMM_BIAS_F16 1u
#define GEMM_BIAS_BF16 2u
#define GEMM_BIAS_F64 3u
#define GEMM_BIAS_BINDING 3
// The dequantization of an int8 product into float C (the VKGEMM_DEQUANT variants; vkgemm::ScaleAxis): the
// word `scale` is 0 (no vector: the per-tensor scale is folded into alpha on the host), GEMM_SCALE_COLUMN
// (column j's scale is the f32 word scale_offset + j of binding 3) or GEMM_SCALE_ROW (row i's, once the
// column-major turn swapped them). A push word of its own, not the epilogue word's bits: it applies on every
// K chunk (linear in the sums), the bias and activation only on the last.
#define GEMM_SCALE_COLUMN 1u
#define GEMM_SCALE_ROW 2u
// The specialization constant EPILOGUE (epilogue.glsl): the epilogue word itself in the pipelines of a pass
// that applies one (engine/src/plan/schedule.cpp), 0 elsewhere, so that a plain product's pipeline has no
// epilogue code at all (the code compiled in beside a runtime test cost the blocked kernel's registers) and
// an epilogue's pipeline only its own activation's (every activation behind a runtime switch cost coopmat2's
// per-element callback its registers).
#define GEMM_EPILOGUE_CONSTANT_ID 30

// ---- the skinny kernel (gemv.comp, kernels/gemv.cpp) ----
// The widest small side one workgroup computes (its SB): the products auto sends to the kernel have M or N at
// most this; wider ones run in blocks of it along the grid's y.
#define GEMM_GEMV_MAX_SMALL 16u

// ---- the KHR cooperative-matrix kernel (coopmat.comp, kernels/coopmat_config.cpp) ----
// Shared memory holds 8-element units, so every fragment side the host takes is a multiple of it.
#define GEMM_COOPMAT_UNIT 8u

// ---- the turn of an 8-bit B (turn_b8.comp, kernels/turn_b.cpp) ----
// A workgroup of GEMM_TURN_INVOCATIONS turns a GEMM_TURN_SIDE x GEMM_TURN_SIDE block of bytes; the grid
// covers N and the workspace's row stride (K rounded up to GEMM_TURN_ROW_ALIGN bytes) in such blocks. Each
// invocation reads four rows of 16 bytes: (SIDE / 4) x (SIDE / 16) invocations cover a block.
#define GEMM_TURN_SIDE 128u
#define GEMM_TURN_INVOCATIONS 256u
#define GEMM_TURN_ROW_ALIGN 16u

#endif  // VKGEMM_GEMM_ABI_H
