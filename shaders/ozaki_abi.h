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

// Garner's weights, row j: W_i mod p_j for i < j (W_i = p_0 ... p_{i-1}), 0 from i = j on; row-major 20 x 20.
// The model's test recomputes them.
#define OZAKI_GARNER_WEIGHTS \
  0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 3u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 5u, 20u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 9u, 72u, 185u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 15u, 210u, 110u, 136u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 17u, 33u, 223u, 47u, 137u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 23u, 40u, 101u, 187u, 55u, 207u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 27u, 15u, 131u, 134u, 122u, 90u, 213u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 29u, 131u, 1u, 24u, 26u, 137u, 55u, 103u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 33u, 164u, 14u, 169u, 42u, 87u, 54u, 94u, 118u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 39u, 180u, 187u, 65u, 214u, 145u, 152u, 45u, 106u, 192u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 45u, 81u, 26u, 196u, 93u, 47u, 50u, 45u, 177u, 89u, 13u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 57u, 8u, 34u, 176u, 90u, 198u, 159u, 33u, 194u, 59u, 23u, 16u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 59u, 73u, 148u, 112u, 84u, 150u, 193u, 53u, 120u, 54u, 25u, 106u, 105u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 63u, 46u, 58u, 83u, 43u, 134u, 181u, 99u, 90u, 165u, 125u, 105u, 153u, 146u, 0u, 0u, 0u, 0u, 0u, \
  1u, 65u, 149u, 70u, 189u, 79u, 130u, 128u, 28u, 109u, 104u, 81u, 5u, 100u, 36u, 25u, 0u, 0u, 0u, 0u, \
  1u, 75u, 120u, 133u, 79u, 146u, 72u, 13u, 133u, 49u, 82u, 5u, 180u, 151u, 3u, 48u, 33u, 0u, 0u, 0u, \
  1u, 77u, 124u, 47u, 162u, 97u, 107u, 155u, 136u, 177u, 83u, 72u, 51u, 21u, 62u, 42u, 51u, 75u, 0u, 0u, \
  1u, 83u, 59u, 49u, 16u, 146u, 67u, 97u, 111u, 161u, 44u, 124u, 93u, 74u, 21u, 158u, 46u, 136u, 50u, 0u

// Workgroup sizes: the split's workgroup walks one line (a row of op(A) or a column of op(B)); the merge's
// covers OZAKI_MERGE_X x OZAKI_MERGE_Y elements of C.
#define OZAKI_SPLIT_INVOCATIONS 256u
#define OZAKI_MERGE_X 32u
#define OZAKI_MERGE_Y 8u

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
//   GEMM flags OZAKI_SPLIT_GROUPED: the lines are adjacent in memory (columns of a B stored K x N, rows of an
//               A stored K x M): a workgroup takes OZAKI_SPLIT_GROUP of them, the grid counts groups of lines
#define OZAKI_SPLIT_COLUMNS 64u
#define OZAKI_SPLIT_GROUPED 128u
#define OZAKI_SPLIT_GROUP 4u

// ---- the merge (ozaki_merge.comp): int32 planes -> C, one block of M rows of C ----
//   M, N, ldc, c_offset, stride_c, batch, GEMM_BETA_ZERO   the block of C as gemm_interface.glsl's store_c
//               writes it (c_offset at the block's first row)
//   K           the K chunks
//   lda         int32 elements of a plane's row (element (i, j) at i * lda + j)
//   a_offset    the first plane's first int32; plane (chunk, l, entry) at
//               ((chunk * moduli + l) * batch + entry) * stride_a after it
//   ldb         the number of moduli
//   b_offset    the block's first row's exponent of op(A) (row i of entry `entry` at b_offset + entry * k_split
//               + i: k_split is the rows of a whole entry), stride_b op(B)'s first (entry * N + j)
//   split_stride  the coverage flag's int32
//   alpha, beta   doubles (OZAKI: the scalars are f64 whatever C's type)

// ---- the arm (ozaki_arm.comp): one invocation ----
//   flags OZAKI_ARM_CLEAR: the coverage flag := 0. Otherwise the indirect dispatch at int32 a_offset gets
//   (M, N, K) when the flag is set, else (0, 0, 0): the native kernel's dispatch runs only for an uncovered
//   product.
#define OZAKI_ARM_CLEAR 1u

#endif  // VKGEMM_OZAKI_ABI_H
