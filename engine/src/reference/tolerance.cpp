#include "reference/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "vkgemm/half.hpp"

namespace vkgemm::detail {
namespace {

constexpr double kLambda = 8.0;          // elementwise: P(exceed) <= 2 exp(-lambda^2 / 2) = 2.5e-14 per element
constexpr double kTailProbability = 1e-12;  // normwise: P(exceed) under this

}  // namespace

double normwise_model_factor(uint64_t elements) {
  if (elements == 0) return 0.0;
  // The mean of N squared standard normals exceeds r with probability at most exp(-N/2 (r - 1 - ln r));
  // solve r - 1 - ln r = 2 ln(1/p) / N for r > 1 by bisection (the left side grows with r).
  const double target = 2.0 * std::log(1.0 / kTailProbability) / static_cast<double>(elements);
  double lo = 1.0, hi = 2.0;
  while (hi - 1.0 - std::log(hi) < target) hi *= 2.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (mid - 1.0 - std::log(mid) < target ? lo : hi) = mid;
  }
  return std::sqrt(hi / 3.0);  // a rounding error of at most u |x| has variance at most u^2 x^2 / 3
}

Tolerance::Tolerance(DataType input, DataType output, uint64_t k, uint32_t extra_roundings,
                     const CompareOptions& options, double alpha, double beta)
    : model_(options.random_inputs && !is_integer(input)), random_rounding_(options.f16_accumulate) {
  const auto steps = static_cast<uint32_t>(std::min<uint64_t>(k + extra_roundings, UINT32_MAX));
  gamma_ = is_integer(input) ? 0.0 : error_bound(input, output, steps, options.f16_accumulate);
  // f16 results that small land among fp16's subnormals (spacing 2^-24): an absolute allowance per rounding.
  if (output == DataType::f16) absolute_ = std::ldexp(1.0, -24) * (options.f16_accumulate ? std::max(steps, 1u) : 1u);
  // bf16 has f32's exponent range; its subnormals are spaced 2^-133.
  if (output == DataType::bf16) absolute_ = std::ldexp(1.0, -133);
  const DataType sums = options.f16_accumulate ? DataType::f16 : is_half_width_float(input) ? DataType::f32 : input;
  // fp32 results below 2^-126 may be flushed to zero: vkgemm's shaders do not ask to keep subnormals, and
  // NVIDIA's driver flushes fp32's (docs/correctness.md). Each product and each addition of the sum loses
  // less than 2^-126 where it flushes, scaled by alpha after; the products by alpha and beta and their sum
  // as much each, beta C's element times |beta|.
  if (sums == DataType::f32) {
    absolute_ += std::ldexp(1.0, -126) * (2.0 * static_cast<double>(steps) * std::fabs(alpha) + 2.0 + std::fabs(beta));
  }
  u_acc_ = unit_roundoff(sums);
  u_out_ = output != sums ? unit_roundoff(output) : 0.0;
}

double Tolerance::end_terms(const ElementTerms& t) const {
  // The product by alpha, by beta and their sum in the sums' precision, then one rounding to C's type.
  return 2.0 * u_acc_ * (std::fabs(t.alpha * t.sum) + std::fabs(t.beta * t.c0)) + u_out_ * std::fabs(t.c_ref);
}

double Tolerance::allowed(const SumStats& s, const ElementTerms& t) const {
  const double worst = gamma_ * (std::fabs(t.alpha) * s.abs_sum + std::fabs(t.beta * t.c0)) + absolute_;
  if (!model_) return worst;
  const double sums = random_rounding_ ? kLambda * u_acc_ * std::sqrt(s.energy) : 2.0 * u_acc_ * s.drift;
  return std::min(worst, std::fabs(t.alpha) * sums + end_terms(t) + absolute_);
}

void Tolerance::accumulate(ModelSums& sums, const SumStats& s, const ElementTerms& t) const {
  if (!model_ || !random_rounding_) return;
  const double e = t.alpha * t.alpha * s.energy;
  sums.energy += e;
  sums.energy_sq += e * e;
  const double end = end_terms(t) + absolute_;
  sums.end2 += end * end;
}

double Tolerance::normwise_model_ratio(const ModelSums& sums, double diff_norm) const {
  if (!model_ || !random_rounding_) return 0.0;
  // Elements of unequal weight count as fewer: the effective number (sum e)^2 / sum e^2.
  const double effective = sums.energy_sq > 0.0 ? sums.energy * sums.energy / sums.energy_sq : 0.0;
  const double allowance =
      normwise_model_factor(static_cast<uint64_t>(effective)) * u_acc_ * std::sqrt(sums.energy) + std::sqrt(sums.end2);
  if (allowance > 0.0) return diff_norm / allowance;
  return diff_norm > 0.0 ? std::numeric_limits<double>::infinity() : 0.0;
}

NonFinite judge_non_finite(DataType output, double reference, double result) {
  double in_type = reference;  // the reference rounded to C's type: past its range it is an infinity
  if (output == DataType::f32) in_type = static_cast<float>(reference);
  if (output == DataType::f16) in_type = half_to_float(float_to_half(static_cast<float>(reference)));
  if (output == DataType::bf16) in_type = bfloat16_to_float(float_to_bfloat16(static_cast<float>(reference)));
  if (std::isfinite(in_type)) return NonFinite::finite;
  const bool same = std::isnan(in_type) ? std::isnan(result) : result == in_type;
  return same ? NonFinite::matches : NonFinite::differs;
}

}  // namespace vkgemm::detail
