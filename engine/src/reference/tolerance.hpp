// The allowance a float result is held to, element by element and as a whole (reference.hpp states the
// bounds and why they hold). One place for the rule, used by both comparisons: the plain product
// (reference.cpp) and the full BLAS call (reference_blas.cpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "vkgemm/reference.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::detail {

// What the reference gathers about one element's sum s_k = sum_p a_p b_p besides its value.
struct SumStats {
  double abs_sum = 0.0;  // sum_p |a_p b_p|                       (the worst-case bound's scale)
  double energy = 0.0;   // sum_p (s_p^2 + (a_p b_p)^2)            (random rounding: fp16 sums)
  double drift = 0.0;    // sum_p (|s_p| + |a_p b_p|)               (any rounding, sequential: wider sums)
  // Adds one term a_p b_p; `partial` is s_p, the sum with it. std::fabs, not a comparison: a branch on the
  // sign of random terms is mispredicted half the time (the sums are the same: they never start at -0).
  void add(double product, double partial) {
    const double ap = std::fabs(product);
    abs_sum += ap;
    energy += partial * partial + product * product;
    drift += std::fabs(partial) + ap;
  }
};

// The scalars of one element: C = alpha * s + beta * c0, c_ref its exact value.
struct ElementTerms {
  double alpha = 1.0, beta = 0.0, c0 = 0.0, sum = 0.0, c_ref = 0.0;
};

// The model's whole-matrix sums over the elements so far: alpha^2 * energy, its square, and the square
// of each element's end terms. Parts of a matrix tally their own and merge.
struct ModelSums {
  double energy = 0.0, energy_sq = 0.0, end2 = 0.0;
  void merge(const ModelSums& o) {
    energy += o.energy;
    energy_sq += o.energy_sq;
    end2 += o.end2;
  }
};

class Tolerance {
 public:
  // k is the product's inner size; extra_roundings is 0 for the plain product and 2 for the BLAS call
  // (the products by alpha and beta and their sum: each one more rounding in the worst-case bound); alpha
  // and beta the call's (the flushing allowance scales with them).
  Tolerance(DataType input, DataType output, uint64_t k, uint32_t extra_roundings, const CompareOptions& options,
            double alpha = 1.0, double beta = 0.0);

  // The worst-case relative bound gamma (Comparison::bound) and the absolute allowance per element.
  double gamma() const { return gamma_; }
  double absolute() const { return absolute_; }
  bool uses_model() const { return model_; }
  double u_sums() const { return u_acc_; }      // the sums' unit roundoff
  double u_output() const { return u_out_; }    // the rounding to C's type (0 where C is the sums' type)

  // |C - C_ref| allowed for one element: gamma * scale + absolute, and with the model on the smaller of
  // that and the model's allowance.
  double allowed(const SumStats& s, const ElementTerms& t) const;
  // The model's whole-matrix allowance accumulates over elements; normwise_model_ratio() then says how
  // far ||C - C_ref||_F stands from it (at most 1 passes; 0 without a normwise model, which only fp16
  // sums have).
  void accumulate(ModelSums& sums, const SumStats& s, const ElementTerms& t) const;
  double normwise_model_ratio(const ModelSums& sums, double diff_norm) const;

 private:
  double end_terms(const ElementTerms& t) const;
  bool model_ = false;           // the inputs are random: the model bounds apply
  bool random_rounding_ = false; // fp16 sums: rounding errors modelled as independent and zero-mean
  double gamma_ = 0.0, absolute_ = 0.0;
  double u_acc_ = 0.0, u_out_ = 0.0;
};

// sigma such that the root-mean-square of N independent normal errors of variance at most 1/3 exceeds
// sigma with probability under 1e-12 (a Chernoff bound on the chi-square tail); 1/sqrt(3) as N grows.
double normwise_model_factor(uint64_t elements);

// Non-finite values. IEEE arithmetic carries an Inf or NaN of the inputs into C in any order of summation
// (NaN stays NaN, Inf + finite stays Inf, Inf - Inf is NaN), so an element whose reference is not finite in
// C's type (`output`: an Inf or NaN in the inputs, or a sum past the type's range) passes when the result is
// the same non-finite value: NaN for NaN, an infinity of the same sign. Such elements are judged only so and
// left out of the normwise error, which measures the finite ones. nullopt: the reference is finite there.
enum class NonFinite { finite, matches, differs };
NonFinite judge_non_finite(DataType output, double reference, double result);

// Whether x counts in a Frobenius norm of the inputs (the normwise error's scale): finite values only, so
// that one Inf in A does not make every finite element's error look like 0.
inline bool counts_in_norm(double x) noexcept { return std::isfinite(x); }

}  // namespace vkgemm::detail
