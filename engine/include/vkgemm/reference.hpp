// The CPU reference GEMM and the comparison every GPU result is judged by.
//
// Float types: the reference accumulates in double (long double for f64). A result passes when
//   normwise:    ||C - C_ref||_F / (||A||_F * ||B||_F)  <=  2 * max(k, 1) * u
//   elementwise: |C_ij - C_ref_ij| <= 2 * max(k, 1) * u * (|A| |B|)_ij   for every element
// with u the unit roundoff of the type (2^-24 for f32, 2^-53 for f64). Both follow from the classic
// bound |C - C_ref| <= gamma_k |A||B| that holds for any summation order; the elementwise test catches a
// single wrong element that the normwise one can miss in a large matrix. NaN or Inf anywhere fails.
// int32: exact equality, with the wrap-around (modulo 2^32) arithmetic the GPU does.
//
// f16 inputs (A and B in fp16, C in f32 or f16): every fp16 value and every product of two is exact in
// fp32, so with fp32 accumulation the bound is that of f32, plus one rounding of the result to fp16 when C
// is f16:   bound = 2 * max(k, 1) * 2^-24  (+ 2^-11 for C f16)
// and, because a result that small lands among fp16's subnormals, an absolute 2^-24 per element for C f16.
// With f16_accumulate (the sums themselves are fp16) u is 2^-11:
//           bound = 2 * max(k, 1) * 2^-11, absolute 2^-24 * max(k, 1)
// which grows with k until it says little; that is the price of fp16 accumulation (and why it is not the
// default). Exactly representable inputs whose sums stay exact must match exactly (the tests check that).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkgemm/types.hpp"

namespace vkgemm {

// c = a * b, row-major; a is m x k, b is k x n, c is m x n, elements of `type`. For float types,
// abs_product (when not null) receives (|A| |B|) as doubles, for the elementwise bound.
void reference_gemm(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b, void* c,
                    std::vector<double>* abs_product = nullptr);

struct Comparison {
  bool passed = false;
  double normwise_error = 0.0;   // ||C - C_ref||_F / (||A||_F ||B||_F); 0 for int32
  double bound = 0.0;            // the bound it is held to; 0 for int32
  double worst_element_ratio = 0.0;  // max over elements of |C - C_ref| / (bound * (|A||B|)_ij)
  uint64_t bad_elements = 0;     // elements outside their bound (or different, for int32), NaN included
  uint64_t first_bad = 0;        // index of the first of them
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
  // Inputs of `input`, C of `output`; f16_accumulate widens the bound to fp16 accumulation. Throws
  // vkgemm::Error(invalid_argument) for a combination that does not exist.
  ReferenceProduct(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b,
                   bool f16_accumulate = false);
  Comparison compare(const void* c_gpu) const;

 private:
  DataType type_;                   // of A and B
  DataType output_;                 // of C
  uint32_t m_, n_, k_;
  double bound_ = 0.0;              // relative bound; 0 for int32
  double absolute_ = 0.0;           // absolute allowance per element (f16 results)
  std::vector<long double> value_;  // C_ref (exact for int32, wrapped modulo 2^32)
  std::vector<double> abs_product_; // (|A| |B|), float types
  double scale_ = 0.0;              // ||A||_F ||B||_F
};

// Compares a GPU result with the reference for the product of a (m x k) and b (k x n).
Comparison compare_with_reference(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a,
                                  const void* b, const void* c_gpu);
// The same for inputs of `input` type and a result of `output` type; f16_accumulate widens the bound
// to fp16 accumulation (GemmOptions::f16_accumulate).
Comparison compare_with_reference(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                                  const void* b, const void* c_gpu, bool f16_accumulate = false);

}  // namespace vkgemm

#include "vkgemm/blas.hpp"

namespace vkgemm {

// The full BLAS call (blas.hpp) on host memory laid out exactly as desc describes it. c_in is C before
// the call (not read when beta = 0), of type output_type(desc); c_out receives C's whole span: the described elements computed, the
// rest (the gaps of ldc and stride_c) copied from c_in. The arithmetic is the reference's (double, long
// double for f64, wrapping for int32), alpha and beta applied once at the end.
void reference_gemm(const GemmDesc& desc, const void* a, const void* b, const void* c_in, void* c_out);

// Judges a GPU result of the full call. Float types pass when, with gamma = 2 (k + 2) u,
//   elementwise: |C_ij - C_ref_ij| <= gamma (|alpha| (|op(A)||op(B)|)_ij + |beta| |C0_ij|)   for every element
//   normwise:    ||C - C_ref||_F <= gamma (|alpha| sqrt(sum_i ||A_i||_F^2 ||B_i||_F^2) + |beta| ||C0||_F)
// (k + 2: the k-term sum, then the products by alpha and beta and their sum, each one rounding; beta = 0
// drops the C0 term; the normwise error reported is the left side over the right side's scale). int32:
// exact. Either way every element of C's span outside the described matrices must equal c_in bitwise.
// f16 inputs: gamma is error_bound(f16, C's type, k + 2, f16_accumulate) (see the top of this file), with
// the same absolute allowance per element for fp16 subnormals.
Comparison compare_with_reference(const GemmDesc& desc, const void* a, const void* b, const void* c_in,
                                  const void* c_gpu, bool f16_accumulate = false);

}  // namespace vkgemm
