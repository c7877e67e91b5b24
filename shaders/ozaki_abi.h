// The emulated f64/f32 product's passes (Ozaki scheme II, docs/design/ozaki.md): the constants the host
// (engine/src/ozaki/) and the shaders (ozaki_split.comp, ozaki_merge.comp, ozaki_arm.comp) share, and what
// each push-constant field of gemm_abi.h's block means to them. Only #defines, as gemm_abi.h.
#ifndef VKGEMM_OZAKI_ABI_H
#define VKGEMM_OZAKI_ABI_H

// The moduli, pairwise coprime, largest first (engine/src/ozaki/moduli.hpp says why these).
#define OZAKI_MODULI 256u, 255u, 253u, 251u, 247u, 241u, 239u, 233u, 229u, 227u, 223u, 217u, 211u, 199u, 197u, \
                     193u, 191u, 181u, 179u, 173u
#define OZAKI_MAX_MODULI 20
// Garner's constants: (p_0 ... p_{j-1})^-1 mod p_j for each j (1 for j = 0). The model's test recomputes them.
#define OZAKI_GARNER_INVERSES 1u, 1u, 211u, 182u, 246u, 184u, 41u, 115u, 161u, 54u, 163u, 149u, 46u, 142u, 91u, \
                              116u, 149u, 164u, 37u, 94u

// Workgroup sizes: the split's workgroup walks one line (a row of op(A) or a column of op(B)); the merge's
// covers OZAKI_MERGE_X x OZAKI_MERGE_Y elements of C.
#define OZAKI_SPLIT_INVOCATIONS 256u
#define OZAKI_MERGE_X 16u
#define OZAKI_MERGE_Y 16u

// The coverage flag (an int32 of the workspace): nonzero when some input is NaN, infinite, or a subnormal the
// scaling would make an integer of; the merge then leaves C alone and the native kernel's dispatches run.
#define OZAKI_UNCOVERED_NONFINITE 1
#define OZAKI_UNCOVERED_SUBNORMAL 2

// ---- the split (ozaki_split.comp): source operand -> exponents and int8 residue planes ----
//   M           lines (rows of op(A), or columns of op(B) with OZAKI_SPLIT_COLUMNS)
//   K           elements of each line
//   lda, a_offset, stride_a, GEMM_TRANS_A   the source as gemm_interface.glsl's load_a reads op(A); with
//               OZAKI_SPLIT_COLUMNS the source is op(B): element (t, line), GEMM_TRANS_A then meaning op(B) = B^T
//   batch       batch entries (the grid's z)
//   N           the number of moduli
//   k_split     the scale bits s (an int, as uint): line max |x| = f 2^x, f in [0.5, 1) -> exponent s - x
//   c_offset    the first plane's first byte; plane (l, entry) starts (l * batch + entry) * stride_c bytes
//               after it; element (line, t) of a plane at line * ldc + t
//   b_offset    the exponents' first int32: line `line` of entry `entry` at b_offset + entry * M + line
//   split_stride  the coverage flag's int32
#define OZAKI_SPLIT_COLUMNS 64u

// ---- the merge (ozaki_merge.comp): int32 planes -> C ----
//   M, N, ldc, c_offset, stride_c, batch, GEMM_BETA_ZERO   C as gemm_interface.glsl's store_c writes it
//   K           the K chunks
//   lda         int32 elements of a plane's row (element (i, j) at i * lda + j)
//   a_offset    the first plane's first int32; plane (chunk, l, entry) at
//               ((chunk * moduli + l) * batch + entry) * stride_a after it
//   ldb         the number of moduli
//   b_offset    op(A)'s exponents' first int32 (entry * M + i), stride_b op(B)'s (entry * N + j)
//   split_stride  the coverage flag's int32
//   alpha, beta   doubles (OZAKI: the scalars are f64 whatever C's type)

// ---- the arm (ozaki_arm.comp): one invocation ----
//   flags OZAKI_ARM_CLEAR: the coverage flag := 0. Otherwise the indirect dispatch at int32 a_offset gets
//   (M, N, K) when the flag is set, else (0, 0, 0): the native kernel's dispatch runs only for an uncovered
//   product.
#define OZAKI_ARM_CLEAR 1u

#endif  // VKGEMM_OZAKI_ABI_H
