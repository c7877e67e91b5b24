// The CPU reference GEMM and the comparison every GPU result is judged by.
//
// Float types: the reference accumulates in double (long double for f64). A result passes when
//   normwise:    ||C - C_ref||_F / (||A||_F * ||B||_F)  <=  2 * max(k, 1) * u
//   elementwise: |C_ij - C_ref_ij| <= 2 * max(k, 1) * u * (|A| |B|)_ij   for every element
// with u the unit roundoff of the type (2^-24 for f32, 2^-53 for f64). Both follow from the classic
// bound |C - C_ref| <= gamma_k |A||B| that holds for any summation order; the elementwise test catches a
// single wrong element that the normwise one can miss in a large matrix. NaN or Inf anywhere fails.
// int32: exact equality, with the wrap-around (modulo 2^32) arithmetic the GPU does. i8 and u8 inputs
// (sign- and zero-extended to int32) give C int32, held to the same: sum, alpha * sum + beta * C, each
// operation two's complement modulo 2^32 (integer alpha and beta).
//
// bf16 inputs (C in f32 or bf16): every bf16 value is an f32 and a product of two (8-bit significands) is
// exact in fp32, so as for f16 the bound is f32's, plus one rounding of the result to bf16 (u = 2^-8, round
// to nearest even) when C is bf16:   bound = 2 * max(k, 1) * 2^-24  (+ 2^-8 for C bf16)
// and an absolute 2^-133 per element for C bf16 (its subnormals' spacing; bf16 has f32's exponent range).
//
// f16 inputs (A and B in fp16, C in f32 or f16): every fp16 value and every product of two is exact in
// fp32, so with fp32 accumulation the bound is that of f32, plus one rounding of the result to fp16 when C
// is f16:   bound = 2 * max(k, 1) * 2^-24  (+ 2^-11 for C f16)
// and, because a result that small lands among fp16's subnormals, an absolute 2^-24 per element for C f16.
// With f16_accumulate (the sums themselves are fp16) u is 2^-11:
//           bound = 2 * max(k, 1) * 2^-11, absolute 2^-24 * max(k, 1)
// which is >= 1 once k >= 1024: it then passes an all-zero C. Exactly representable inputs whose sums
// stay exact must match exactly (the tests check that).
//
// fp32 sums (f32, f16 and bf16 inputs) add an absolute 2^-126 * (2k |alpha| + 2 + |beta|) per element: a
// device may flush fp32 results below 2^-126 to zero (vkgemm's shaders do not ask to keep subnormals, and
// NVIDIA's driver flushes them), each of the k products and additions and the final scaling losing less
// than 2^-126. Subnormal inputs flushed against a large partner are not covered.
//
// The model bounds (CompareOptions::random_inputs: the inputs are independent random values, as every
// test and `vkgemm run` without files draw them). The reference also records, per element, the partial
// sums s_p = a_1 b_1 + ... + a_p b_p in k order, and the allowance becomes the smaller of the worst case
// above and
//   fp16 sums:  lambda * u * sqrt(sum_p s_p^2 + (a_p b_p)^2)  + E,  lambda = 8
//     (Higham and Mary's probabilistic analysis: each rounding an independent zero-mean error of at most u
//     times what it rounds; Hoeffding's inequality puts an element outside with probability at most
//     2 exp(-lambda^2 / 2) = 2.5e-14.) And normwise, ||C - C_ref||_F <= c_N u sqrt(sum_ij (sum_p ...)) +
//     ||E||_F, where c_N -> 1/sqrt(3) is the factor a chi-square tail of the N elements exceeds with
//     probability under 1e-12 (reference/tolerance.cpp). This is what rejects a wrong result at any k: the
//     worst case grows as k u |A||B| while a sum of random terms grows as sqrt(k), so at k >= 1024 the worst
//     case passes an all-zero C; the model does not, nor a dropped K step or split-K slice (the reference
//     tests show both at k = 1024, 4096 and 14336).
//   wider sums (f32, f64):  2 * u * sum_p (|s_p| + |a_p b_p|)  + E
//     (each rounding of the running sum errs by at most u |s_p|, in any direction, so this holds for
//     truncating hardware too; it catches a path that silently rounds its inputs to fp16 or TF32.)
// E = 2 u (|alpha s_k| + |beta c0|) + u_C |C_ref| + the absolute allowance: the products by alpha and beta,
// their sum, and the rounding to C's type. Off by default: data with structure (all ones, say) makes
// rounding errors correlated, and there only the worst case holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkgemm/types.hpp"

namespace vkgemm {

// How a comparison judges a float result (see the top of this file).
struct CompareOptions {
  bool f16_accumulate = false;  // the sums are fp16 (GemmOptions::f16_accumulate): u = 2^-11
  bool random_inputs = false;   // the inputs are independent random values: the model bounds apply too
  // The full call's comparisons (below) of an f32 or f64 result of the ozaki kernel with this many moduli
  // (GemmOptions::emulation_moduli; 2 to 20): judged by the emulation's own bound instead of the native
  // kernel's (docs/correctness.md, "Emulated products"), element by element and in the sampled check's row
  // sums; the model bounds do not apply. A call whose inputs the emulation does not cover (NaN, an infinity,
  // a subnormal that matters: the device then runs the native kernel) is judged by the native bound.
  // 0: the native kernel's bound. The emulation with its default moduli meets that: leave this 0 for it.
  uint32_t emulation_moduli = 0;
  // A dequantized int8 product (dequantizes(desc)) cut along K into this many chunks (a watchdog bound,
  // GemmOptions::max_k_per_submission): each chunk's sums are converted, scaled and added into C in fp32.
  uint32_t k_chunks = 1;
};

// c = a * b, row-major; a is m x k, b is k x n, c is m x n, elements of `type` (i8, u8: of i32). For float types,
// abs_product (when not null) receives (|A| |B|) as doubles, for the elementwise bound.
void reference_gemm(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b, void* c,
                    std::vector<double>* abs_product = nullptr);

struct Comparison {
  bool passed = false;
  double normwise_error = 0.0;   // ||C - C_ref||_F / (||A||_F ||B||_F); 0 for int32
  double bound = 0.0;            // the bound it is held to; 0 for int32
  double worst_element_ratio = 0.0;  // max over elements of |C - C_ref| / its allowance
  double normwise_model_ratio = 0.0;  // ||C - C_ref||_F over the model's normwise allowance (fp16 sums with
                                      // random inputs; at most 1 passes); 0 when not used
  uint64_t bad_elements = 0;     // elements outside their bound (or different, for int32), NaN included
  uint64_t first_bad = 0;        // index of the first of them
  // What the sampled check (check_sampled, below) judged; empty for a full comparison.
  struct Sampled {
    uint64_t seed = 0;              // the witnesses and the row sums' vectors were drawn from it
    uint64_t witnesses = 0;         // elements judged one by one, as the full comparison judges each
    uint64_t elements = 0;          // C's described elements
    uint32_t tile_m = 0, tile_n = 0;  // every block of C this size, wherever it is placed, in every batch entry,
                                      // holds a witness
    uint32_t vectors = 0;           // random vectors each row of C was summed against
    double row_sum_ratio = 0.0;     // the worst row sum's difference over its bound (at most 1 passes)
    double row_sum_catch = 0.0;     // any one element off by more than this fails its row's sum (float types;
                                    // 0 for integers, whose sums are exact modulo 2^32)
    uint64_t bad_rows = 0;          // rows whose sums fail, and the first as an index of C's span
    uint64_t first_bad_row = 0;
    uint64_t rows_unjudged = 0;     // rows whose sums say nothing: their inputs hold NaN or Inf, or the
                                    // reference may pass C's range there (their witnesses still count)
  };
  std::optional<Sampled> sampled;
  // The bound that judged: the emulation's own with this many moduli (CompareOptions::emulation_moduli, the
  // inputs covered), or 0: the native kernel's. With the emulation's, `bound` is the normwise bound its
  // elements' allowances add up to, over the same scale as normwise_error.
  uint32_t emulation_moduli = 0;
  std::string summary() const;   // one line for people
};

double unit_roundoff(DataType type) noexcept;
double error_bound(DataType type, uint32_t k) noexcept;
// The relative bound for inputs of `input` type, C of `output` type (see above).
double error_bound(DataType input, DataType output, uint32_t k, bool f16_accumulate = false) noexcept;

// c = a * b with inputs of type `input` and c of type `output` (f16 inputs: f32 or f16 output;
// otherwise output == input). The reference always accumulates in double.
void reference_gemm(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                    const void* b, void* c);

// The reference product of a (m x k) and b (k x n), computed once (on every core) and kept, to judge
// several results of the same product.
class ReferenceProduct {
 public:
  // C of default_output_type(type).
  ReferenceProduct(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b);
  // Inputs of `input`, C of `output`, judged as `options` say. Throws vkgemm::Error(invalid_argument) for
  // a combination that does not exist.
  ReferenceProduct(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b,
                   const CompareOptions& options = {});
  Comparison compare(const void* c_gpu) const;

 private:
  DataType type_;                   // of A and B
  DataType output_;                 // of C
  uint32_t m_, n_, k_;
  CompareOptions options_;
  std::vector<long double> value_;  // C_ref (exact for int32, wrapped modulo 2^32)
  std::vector<double> abs_product_; // (|A| |B|), float types
  std::vector<double> energy_, drift_;  // the model's sums per element (random_inputs only)
  double scale_ = 0.0;              // ||A||_F ||B||_F
};

// Compares a GPU result with the reference for the product of a (m x k) and b (k x n).
Comparison compare_with_reference(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a,
                                  const void* b, const void* c_gpu);
// The same for inputs of `input` type and a result of `output` type, judged as `options` say.
Comparison compare_with_reference(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                                  const void* b, const void* c_gpu, const CompareOptions& options = {});

}  // namespace vkgemm

#include "vkgemm/blas.hpp"
#include "vkgemm/options.hpp"

namespace vkgemm {

// The full BLAS call (blas.hpp) on host memory laid out exactly as desc describes it. c_in is C before
// the call (not read when beta = 0), of type output_type(desc); c_out receives C's whole span: the described elements computed, the
// rest (the gaps of ldc and stride_c) copied from c_in. The arithmetic is the reference's (double, long
// double for f64, wrapping for int32), alpha and beta applied once at the end.
// With an epilogue (desc.epilogue), `bias` holds its bias vector (bias_length(desc) elements of its bias_type)
// where it has one, and each element is epilogue(alpha s + beta c0), computed in long double. A dequantizing
// int8 product (dequantizes(desc)) takes its exact integer sums s and computes act(alpha * scale * s +
// beta c0 + bias) in long double; `bias` is then the whole fourth operand (per_column scales first, the bias
// at bias_byte_offset(desc)), and compare_with_reference judges each element alone: 6 * 2^-24 of |scaled
// product| + |beta c0| + |bias| (fp32's conversion of the sum, the two scale multiplications, alpha's own
// rounding, beta C and the additions) through the activation's slope, plus its own error and C's rounding.
// Cut into CompareOptions::k_chunks > 1, each chunk adds its conversion, scalings and addition into C and the
// rounding of its partial result stored in C: 4u + u_C a chunk, of |scale| k max|a||b| (which bounds every
// partial sum).
void reference_gemm(const GemmDesc& desc, const void* a, const void* b, const void* c_in, void* c_out,
                    const void* bias = nullptr);

// The CompareOptions::emulation_moduli a result of the kernel `ran` computed with `options` is judged with:
// the ozaki kernel's with moduli other than its default for the call's type and k (options.emulation_moduli:
// the caller traded accuracy for speed) by the emulation's own bound, that count; 0 for every other result
// (the default moduli meet the native kernel's bound, and the native kernels are held to it).
uint32_t emulation_moduli_to_judge(const GemmDesc& desc, const GemmOptions& options, Kernel ran) noexcept;

// Judges a GPU result of the full call. Float types pass when, with gamma = 2 (k + 2) u,
//   elementwise: |C_ij - C_ref_ij| <= gamma (|alpha| (|op(A)||op(B)|)_ij + |beta| |C0_ij|)   for every element
//   normwise:    ||C - C_ref||_F <= gamma (|alpha| sqrt(sum_i ||A_i||_F^2 ||B_i||_F^2) + |beta| ||C0||_F)
// (k + 2: the k-term sum, then the products by alpha and beta and their sum, each one rounding; beta = 0
// drops the C0 term; the normwise error reported is the left side over the right side's scale). int32:
// exact. Either way every element of C's span outside the described matrices must equal c_in bitwise.
// f16 inputs: gamma is error_bound(f16, C's type, k + 2, f16_accumulate) (see the top of this file), with
// the same absolute allowance per element for fp16 subnormals. options.random_inputs adds the model bounds.
// With an epilogue (desc.epilogue; `bias` its vector where it has one), each element's allowance e for the
// activation's argument x = alpha s + beta c0 + bias becomes
//   L (e + u_s |x|) + e_act(x) + u_C |C_ref|
// (L the activation's largest slope, u_s the sums' unit roundoff, e_act the shader's own error in the
// activation, u_C C's rounding: docs/correctness.md, "Epilogues"), and the normwise bound is L gamma with
// those terms as slack.
Comparison compare_with_reference(const GemmDesc& desc, const void* a, const void* b, const void* c_in,
                                  const void* c_gpu, const CompareOptions& options = {}, const void* bias = nullptr);

// The sampled check of a full call: a verdict in O(batch (mk + kn + mn)) work and the witnesses' sums,
// for products too large for the full comparison's O(batch m n k). Two parts (docs/correctness.md, "The
// sampled check"):
//  - witnesses: in every batch entry, one row of C in every tile_m / 2 rows and one column in every
//    tile_n / 2 columns (the first and last of each too, and more at random while `budget` multiply-adds
//    allow), and every element where a witness row meets a witness column, each judged exactly as
//    compare_with_reference judges it (and normwise over them). Any tile of tile_m x tile_n, however the
//    kernel's grid is placed, holds one; a lost K chunk or split-K slice, a wrong batch stride, alpha or
//    beta wrong or an operand read with the wrong op show in every witness.
//  - row sums (Freivalds): for `vectors` random vectors x of signs, each row's C x against
//    alpha op(A) (op(B) x) + beta C0 x. Float types: a correct row's difference is a sum of its elements'
//    errors with random signs, held to lambda sqrt(sum_j allowed_ij^2) (Hoeffding's inequality over the
//    signs; lambda sets the chance of failing a right result anywhere under 1e-12) plus the sums' own
//    rounding (double; long double for f64), with sum_j allowed_ij^2 bounded from the rows' norms. An
//    element off by more than Sampled::row_sum_catch fails its row for certain, wherever it is; smaller
//    errors are caught where a witness stands. Integer types: exact modulo 2^32, with odd random x: any
//    one wrong element fails its row.
// The gaps of C's span are checked bit for bit, all of them. Throws what compare_with_reference throws.
struct SampleOptions {
  uint64_t seed = 0;
  uint32_t tile_m = 64, tile_n = 64;    // the tile of C the product ran with (the plan's), or smaller
  uint64_t budget = uint64_t{1} << 28;  // multiply-adds for the witnesses; past it the covered tile grows
  uint32_t vectors = 2;
};
// With an epilogue (desc.epilogue, `bias` its vector where it has one), the row sums, linear in C, do not
// apply: the witnesses alone judge (Sampled::vectors 0).
Comparison check_sampled(const GemmDesc& desc, const void* a, const void* b, const void* c_in, const void* c_gpu,
                         const CompareOptions& options, const SampleOptions& sample, const void* bias = nullptr);

}  // namespace vkgemm
