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

// Garner's weights times the digit's inverse, row j: (W_i mod p_j) inverse[j] mod p_j for i < j (W_i = p_0 ...
// p_{i-1}), 0 from i = j on; row-major 20 x 20. Digit j is then (y_j inverse[j] - sum_i weight[j][i] v_i) mod p_j,
// one modulo a digit. The model's test recomputes them.
#define OZAKI_GARNER_WEIGHTS \
  0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  1u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  211u, 127u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  182u, 157u, 126u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  246u, 238u, 175u, 62u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  184u, 109u, 80u, 237u, 201u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  41u, 219u, 158u, 61u, 15u, 120u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  115u, 82u, 173u, 198u, 69u, 34u, 39u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  161u, 225u, 125u, 23u, 48u, 177u, 63u, 172u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  54u, 204u, 37u, 54u, 161u, 42u, 134u, 19u, 114u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  163u, 27u, 195u, 52u, 118u, 156u, 132u, 105u, 158u, 56u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  149u, 169u, 129u, 87u, 137u, 204u, 122u, 80u, 195u, 170u, 181u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  46u, 171u, 139u, 141u, 154u, 58u, 52u, 190u, 171u, 124u, 85u, 176u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  142u, 134u, 141u, 52u, 117u, 44u, 57u, 91u, 109u, 86u, 20u, 82u, 83u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
  91u, 50u, 142u, 72u, 145u, 158u, 57u, 30u, 95u, 85u, 186u, 108u, 190u, 99u, 0u, 0u, 0u, 0u, 0u, 0u, \
  116u, 167u, 125u, 166u, 171u, 163u, 104u, 152u, 97u, 18u, 33u, 25u, 21u, 185u, 145u, 0u, 0u, 0u, 0u, 0u, \
  149u, 135u, 45u, 116u, 84u, 120u, 79u, 163u, 161u, 6u, 25u, 36u, 172u, 2u, 16u, 96u, 0u, 0u, 0u, 0u, \
  164u, 173u, 132u, 92u, 105u, 52u, 43u, 141u, 92u, 72u, 54u, 96u, 17u, 148u, 130u, 89u, 163u, 0u, 0u, 0u, \
  37u, 164u, 113u, 128u, 87u, 9u, 21u, 7u, 20u, 105u, 28u, 158u, 97u, 61u, 146u, 122u, 97u, 90u, 0u, 0u, \
  94u, 17u, 10u, 108u, 120u, 57u, 70u, 122u, 54u, 83u, 157u, 65u, 92u, 36u, 71u, 147u, 172u, 155u, 29u, 0u

#define OZAKI_SPLIT_INVOCATIONS 256u
#define OZAKI_MERGE_X 32u
#define OZAKI_MERGE_Y 8u

// The coverage flag (an int32 of the workspace): nonzero when some input is NaN, infinite, or a subnormal the
// scaling would make an integer of; the merge then leaves C alone and the native kernel's dispatches run.
#define OZAKI_UNCOVERED_NONFINITE 1
#define OZAKI_UNCOVERED_SUBNORMAL 2
// The span guard admitted no candidate count (the choice word; ozaki_guard.comp): the reason a report names.
#define OZAKI_UNCOVERED_SPAN 4

// The magnitude plane (plane MODULI of each side, after the residue planes): floor(|x| 2^(e - s + 7)) of each
// scaled element, in [0, 127] (the line's largest lands in [64, 127]): its int8 product is a lower bound of
// |op(A)||op(B)| in units of 2^(sA + sB - 14) (below 2^31 over a K chunk: 2^17 * 127^2 < 2^31).
#define OZAKI_MAGNITUDE_BITS 7
// A line's magnitude levels: for b = 0 .. OZAKI_MAGNITUDE_LEVELS - 1, how many of its magnitude bytes are at
// least 2^(OZAKI_LEVEL_SHIFT + b): 16, 32, 64 (a line's largest is at least 64). From two lines' levels the span
// guard bounds their magnitude sum from below without the product (engine/src/ozaki/guard.hpp, level_bound).
#define OZAKI_MAGNITUDE_LEVELS 3u
#define OZAKI_LEVEL_SHIFT 4u
// A line's statistics: its scaled 1-norm (a double: 2 int32s), then its magnitude levels, then one spare int32
// (so that the next line's double stays 8-byte aligned).
#define OZAKI_LINE_WORDS (2u + OZAKI_MAGNITUDE_LEVELS + 1u)

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
//   stride_b    the bits the subnormal test adds to s: a subnormal matters where the scaling by 2^(e + stride_b)
//               would keep it, so that the largest candidate count's split (guard.hpp) covers what this one does
//   ldb         with OZAKI_SPLIT_GUARDED, the line statistics' first int32 (even): line `line` of entry `entry`
//               holds OZAKI_LINE_WORDS int32s from ldb + (entry * M + line) * OZAKI_LINE_WORDS on: the double of
//               its scaled 1-norm sum_t |x_t| 2^e, negated where some element is not an integer multiple of the
//               line's quantum 2^-e (an "inexact" line; a positive or zero norm: every element exact), then
//               its magnitude levels; each line's levels, norm and inexactness also go into its side's extremes
//               (OZAKI_EXTREME_LINES_WORD: op(A)'s with OZAKI_SPLIT_COLUMNS clear, op(B)'s set)
//   GEMM flags OZAKI_SPLIT_GROUPED: the lines are adjacent in memory (columns of a B stored K x N, rows of an
//               A stored K x M): a workgroup takes OZAKI_SPLIT_GROUP of them, the grid counts groups of lines
#define OZAKI_SPLIT_COLUMNS 64u
#define OZAKI_SPLIT_GROUPED 128u
// GEMM flags OZAKI_SPLIT_GUARDED: the span guard runs (guard.hpp says when): the magnitude plane and the line
// statistics are written too
#define OZAKI_SPLIT_GUARDED 256u
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

// ---- the span guard (ozaki_guard.comp): one invocation per element of C ----
//   M, N, batch  C's rows and columns (after the column-major turn) and the batch entries (the grid's z)
//   K           the K chunks; k_split the product's K (the cross term's k / 4)
//   a_offset    the magnitude products' first int32; element (i, j) of chunk c, entry t at
//               a_offset + c * stride_b + t * stride_a + i * N + j
//   GEMM flags OZAKI_GUARD_LEVELS: the magnitude sums are bounded from the lines' magnitude levels instead
//               (the products are not read): with one candidate, its refusal word OZAKI_LEVELS_WORD; where it
//               refuses, the magnitude products and the pass on them decide
//               OZAKI_GUARD_EXTREMES: one invocation judges the first candidate on the lines' extremes
//               (OZAKI_EXTREME_LINES_WORD), the least favourable row against the least favourable column:
//               its refusal word OZAKI_EXTREMES_WORD; where it refuses, the levels' pass decides
//   ldb, ldc    the line statistics' first int32 of op(A)'s rows and of op(B)'s columns (the split's ldb)
//   split_stride  the coverage flag's int32 (read: where it is set the guard judges nothing)
//   c_offset    the first refusal word (OZAKI_REFUSED_WORD): word c_offset + d set where some element refuses
//               candidate d (plain stores of 1: the refusals nest, each refusing every candidate below its first
//               admitted one, so the words set are the first ones and their number is the choice)
//   lda         the candidate counts, 1 to OZAKI_MAX_CANDIDATES (guard.hpp: the type's default and more)
//   b_offset    candidate d's scale bits past candidate 0's, for d = 1, 2: op(A)'s in byte 2 (d - 1), op(B)'s
//               in byte 2 (d - 1) + 1
//   alpha       candidate 0's allowance per unit of magnitude sum (double): the guard admits element (i, j) at
//               candidate d when
//               [row i inexact] |B'_j|_1 / 2^(1 + dA) + [column j inexact] |A'_i|_1 / 2^(1 + dB)
//               + [both] k / 2^(2 + dA + dB) <= alpha * S_ij,
//               S_ij the magnitude sums over the K chunks, the statistics candidate 0's (engine/src/ozaki/guard.hpp)
#define OZAKI_MAX_CANDIDATES 3u
#define OZAKI_GUARD_LEVELS 64u
#define OZAKI_GUARD_EXTREMES 128u

// ---- the arm (ozaki_arm.comp): one invocation; its push constants read as words ----
//   mode OZAKI_ARM_CLEAR: the GATE int32s from FLAG on := 0. Otherwise SLOTS indirect dispatches, each its
//   first int32 and grid from SLOT + 4 s on, get their grids where they run, else (0, 0, 0). The choice is the
//   number of the CANDIDATES refusal words from GATE on that are set; a pass of candidate count CANDIDATE (its
//   splits, products and merges) runs where the coverage flag (int32 FLAG) is clear and the choice is
//   CANDIDATE; with OZAKI_ARM_NATIVE, a native kernel's dispatch runs where the flag is set or the choice is
//   CANDIDATES (every candidate refused); with OZAKI_ARM_GUARD, a pass of the span guard runs where the flag is
//   clear and the pass before it refused the first count (int32 GATE set: the extremes' word arms the levels'
//   pass, the levels' word the magnitude products and the pass on them). The dispatches one condition arms
//   are armed together, up to OZAKI_ARM_MAX_SLOTS a pass.
#define OZAKI_ARM_CLEAR 1u
#define OZAKI_ARM_NATIVE 2u
#define OZAKI_ARM_GUARD 4u
#define OZAKI_ARM_WORD_MODE 0u
#define OZAKI_ARM_WORD_FLAG 1u
#define OZAKI_ARM_WORD_GATE 2u
#define OZAKI_ARM_WORD_CANDIDATE 3u
#define OZAKI_ARM_WORD_CANDIDATES 4u
#define OZAKI_ARM_WORD_SLOTS 5u
#define OZAKI_ARM_WORD_SLOT 6u
#define OZAKI_ARM_MAX_SLOTS 5u  // (GEMM_PUSH_BYTES / 4 - OZAKI_ARM_WORD_SLOT) / 4
// The workspace's control int32s: the coverage flag (the splits' OZAKI_UNCOVERED_* bits), then the span guard's
// refusal of each candidate count (docs/design/ozaki.md, "The count chosen on the device"), then the levels'
// and the extremes' refusals of the first count, then the lines' extremes; the indirect commands after them.
// The extremes, op(A)'s rows' then op(B)'s columns', OZAKI_EXTREME_WORDS each, every line of every batch entry
// taken in by an atomic maximum from zero: for each level b, 0x7fffffff minus the fewest bytes at level b
// (a maximum of the complement is the minimum); the largest high word of a 1-norm's double (the norm at most
// the double of that high word plus one, low word 0); 1 where some line is inexact.
#define OZAKI_FLAG_WORD 0u
#define OZAKI_REFUSED_WORD 1u
#define OZAKI_LEVELS_WORD (1u + OZAKI_MAX_CANDIDATES)
#define OZAKI_EXTREMES_WORD (2u + OZAKI_MAX_CANDIDATES)
#define OZAKI_EXTREME_LINES_WORD (3u + OZAKI_MAX_CANDIDATES)
#define OZAKI_EXTREME_WORDS (OZAKI_MAGNITUDE_LEVELS + 2u)
#define OZAKI_CONTROL_WORDS (3u + OZAKI_MAX_CANDIDATES + 2u * OZAKI_EXTREME_WORDS)

#endif  // VKGEMM_OZAKI_ABI_H
