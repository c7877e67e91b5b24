// The CPU model of the emulated f64 and f32 product (Ozaki scheme II, docs/design/ozaki.md): the same
// integers, residues and reconstruction the device's passes compute, element for element, in host code. The
// tests hold it to the double-accumulation reference and to the emulation's own bound, and show that bound
// rejecting each wrong result a mutation makes.
//
//   split:    each row i of op(A) is scaled by 2^e_i, e_i = sA - x_i where max_k |a_ik| = f 2^x_i, f in
//             [0.5, 1) (0 for a zero row), and rounded to the nearest integer (ties to even): |A'_ik| <= 2^sA.
//             Likewise each column j of op(B) by 2^f_j with sB. Then A' mod p_l, balanced, is plane l (int8).
//   products: plane l of C is A'_l B'_l in int32 (wrapping), one per K chunk of at most kChunkK.
//   merge:    y_l = sum over chunks of (C_l mod p_l) mod p_l; Garner's balanced mixed-radix digits v_l
//             (exact small integers); C' = v_0 + p_0 (v_1 + p_1 (v_2 + ...)) by compensated Horner in double
//             (within u |C'| of the exact value); C = alpha C' 2^-(e_i + f_j) + beta C0, in double, then
//             rounded to C's type.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "ozaki/guard.hpp"
#include "ozaki/moduli.hpp"
#include "vkgemm/blas.hpp"

namespace vkgemm::ozaki {

// A wrong result made on purpose at one stage, so the tests can show the bounds reject it.
enum class Mutation {
  none,
  drop_modulus,      // the merge reads the last modulus's plane as all zeros
  wrong_weight,      // the last modulus's Garner inverse off by one
  scale_off_by_one,  // row 0 of op(A) scaled back by 2^-(e_0 + 1)
  lose_chunk,        // the merge skips the last K chunk
  no_guard,          // the span guard admits every product
  lenient_guard,     // the span guard's allowance that of one modulus more than the product has
  first_count_only,  // the default moduli the only candidate: a call they do not cover goes to the native kernel
};

struct ModelOptions {
  uint32_t moduli = 0;         // 0: default_moduli(type, k)
  uint32_t chunk_k = kChunkK;  // the K range of one int8 product
  Mutation mutation = Mutation::none;
};

// One operand split: the exponent of each row of op(A) (column of op(B)) and its int8 residue planes.
struct SplitSide {
  std::vector<int32_t> exponent;
  std::vector<int8_t> planes;     // plane l at l * rows * cols: op(A) m x k or op(B) k x n, row-major
  std::vector<int8_t> magnitude;  // floor(|x| 2^(e - s + 7)) of each element, laid out as a plane (guard.hpp)
  std::vector<LineStats> stats;   // each line's scaled 1-norm and whether it is inexact (guard.hpp)
  bool covered = true;            // false: a NaN or infinity, or a subnormal the scaling would not round to 0
};

// The split's rule for one line (a row of op(A) or a column of op(B)): the exponent e it is scaled by, 2^e,
// from its largest finite magnitude (0 for a zero line), and whether the emulation covers it: no NaN or
// infinity, and no subnormal that the scaling could round to a nonzero integer (e >= 1022 for f64, 126 for
// f32; a device may flush it). `bits` is the side's scale bits.
struct LineScale {
  int32_t exponent = 0;
  bool covered = true;
};
// `test_bits` more bits in the subnormal test alone: the first split tests at the largest candidate count's
// scale (guard.hpp), so that the coverage it finds holds for every candidate.
LineScale line_scale(double largest, bool non_finite, bool has_subnormal, int bits, DataType type, int test_bits = 0);
// Whether v is a subnormal of `type` (f32 values held as doubles: below f32's smallest normal).
bool subnormal(double v, DataType type);

// Splits the rows (by_rows) or the columns of a dense rows x cols row-major matrix of `type`'s values held
// as doubles, with `bits` the side's scale bits (ScaleBits).
SplitSide split(std::span<const double> x, uint32_t rows, uint32_t cols, bool by_rows, int bits,
                const Moduli& moduli, DataType type, int test_bits = 0);

// The balanced residue of an integer-valued double |v| < 2^62, as the device computes it: v's two 32-bit
// halves reduced separately.
int32_t balanced_residue(double v, uint32_t p);

// The int8 products: [chunk][plane][m x n] int32 sums, wrapping modulo 2^32 as the device's do.
std::vector<int32_t> plane_products(const SplitSide& a, const SplitSide& b, uint32_t m, uint32_t n, uint32_t k,
                                    uint32_t count, uint32_t chunk_k);

// The span guard's verdict on one entry (guard.hpp): the magnitude planes' product summed over the K chunks,
// each element's truncation bound against its allowance. `worst` gets the largest ratio bound / allowance
// (above 1: refused).
bool span_guard(const SplitSide& a, const SplitSide& b, uint32_t m, uint32_t n, uint32_t k, double allowance,
                double* worst = nullptr);

// The span guard's levels pass on one entry (guard.hpp, level_bound): whether every element admits the first
// candidate count on its lines' magnitude levels alone.
bool levels_admit(const SplitSide& a, const SplitSide& b, uint32_t m, uint32_t n, uint32_t k, double allowance);

// The span guard's choice on one entry: the first candidate count every element admits (candidates.count
// where some element admits none), `allowance` the first candidate's.
uint32_t span_choice(const SplitSide& a, const SplitSide& b, uint32_t m, uint32_t n, uint32_t k, double allowance,
                     const Candidates& candidates);

// C' from the residues y_l in [0, p_l): Garner's digits, then compensated Horner (see the top of the file).
double reconstruct(const std::array<uint32_t, kMaxModuli>& residues, const Moduli& moduli);

// v 2^e, in two steps so that no step's power of two leaves double's range (|e| up to about 2200).
double scale_back(double v, int32_t e);

// The dense product of one batch entry with options.moduli (the span guard's choice: not judged again): c (m x n,
// row-major) = alpha op(A) op(B) + beta c (c not read when beta = 0), values of `type` held as doubles and
// rounded to it. Returns false when a side is not covered (c is then left as it was: the native kernel's).
bool model_product(std::span<const double> a, std::span<const double> b, std::span<double> c, uint32_t m,
                   uint32_t n, uint32_t k, double alpha, double beta, DataType type, const ModelOptions& options);

// The full BLAS call (f32 or f64) on host memory laid out as desc says, as reference_gemm(desc, ...) takes
// it: c_out gets C's whole span (c_in copied, the described elements computed), with the candidate count the
// span guard chooses over every batch entry (guard.hpp), as the device does. Returns false where an input is
// not covered or no candidate is admitted (c_out is then c_in: the device runs the native kernel).
bool model_gemm(const GemmDesc& desc, const void* a, const void* b, const void* c_in, void* c_out,
                const ModelOptions& options = {});

// Which of the device's span guard passes decides the first count of the call (f32 or f64, its default moduli;
// guard.hpp): the lines' extremes over every batch entry where they admit it, else the lines' levels where they
// admit it on every entry, else the magnitude products (also where an input is uncovered).
GuardPass deciding_pass(const GemmDesc& desc, const void* a, const void* b);

}  // namespace vkgemm::ozaki
