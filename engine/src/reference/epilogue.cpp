#include "reference/epilogue.hpp"

#include <algorithm>
#include <cmath>

#include "core/element_access.hpp"

// An activation a build adds after the list (vkgemm/names.hpp's VKGEMM_EXTRA_ACTIVATIONS) brings its cases of
// the three switches below: none, except in the build of tests/add_activation/, where they are the test
// activation's. An activation of the list writes its cases into the switches themselves.
#ifndef VKGEMM_EXTRA_ACTIVATION_FORMULAS
#define VKGEMM_EXTRA_ACTIVATION_FORMULAS
#define VKGEMM_EXTRA_ACTIVATION_SLOPES
#define VKGEMM_EXTRA_ACTIVATION_ERRORS
#endif

namespace vkgemm::detail {

long double apply_activation(const Epilogue& e, long double x) noexcept {
  constexpr long double kSqrt2OverPi = 0.79788456080286535587989211986876373L;
  switch (e.activation) {
    case Activation::none: return x;
    case Activation::relu: return x > 0 ? x : 0.0L;
    case Activation::leaky_relu: return x >= 0 ? x : static_cast<long double>(e.slope) * x;
    case Activation::gelu_tanh: return 0.5L * x * (1.0L + std::tanh(kSqrt2OverPi * (x + 0.044715L * x * x * x)));
    case Activation::gelu_erf: return 0.5L * x * (1.0L + std::erf(x / std::sqrt(2.0L)));
    case Activation::silu: return x / (1.0L + std::exp(-x));
    case Activation::sigmoid: return 1.0L / (1.0L + std::exp(-x));
    case Activation::tanh: return std::tanh(x);
    case Activation::clamp:  // the door refuses a clamp without both bounds; none here clamps nothing
      return std::min<long double>(std::max<long double>(x, e.lo.value_or(-INFINITY)), e.hi.value_or(INFINITY));
    VKGEMM_EXTRA_ACTIVATION_FORMULAS
  }
  return x;
}

double activation_slope_bound(const Epilogue& e) noexcept {
  switch (e.activation) {
    case Activation::leaky_relu: return std::max(1.0, std::fabs(e.slope));
    case Activation::gelu_tanh: case Activation::gelu_erf: return 1.13;  // max of GELU' is 1.1289 (at x = 2.12)
    case Activation::silu: return 1.1;                                    // max of SiLU' is 1.0998 (at x = 2.40)
    case Activation::sigmoid: return 0.25;
    VKGEMM_EXTRA_ACTIVATION_SLOPES
    default: return 1.0;
  }
}

double activation_error(const Epilogue& e, double u_sums, double x) noexcept {
  switch (e.activation) {
    case Activation::gelu_tanh: case Activation::gelu_erf: case Activation::silu: case Activation::sigmoid:
    case Activation::tanh:
      return std::ldexp(1.0, -18) * (1.0 + std::fabs(x));
    // The slope rounded to the sums' precision, and the product's rounding.
    case Activation::leaky_relu: return x < 0 ? 2.0 * u_sums * std::fabs(e.slope * x) : 0.0;
    // A bound rounded to the sums' precision, where it is the result.
    case Activation::clamp:
      if (x < e.lo.value_or(-INFINITY)) return u_sums * std::fabs(*e.lo);
      if (x > e.hi.value_or(INFINITY)) return u_sums * std::fabs(*e.hi);
      return 0.0;
    VKGEMM_EXTRA_ACTIVATION_ERRORS
    default: return 0.0;
  }
}

double bias_at(const GemmDesc& d, const void* bias, int64_t row, int64_t col) noexcept {
  if (!bias || d.epilogue.bias == BiasAxis::none) return 0.0;
  return load_element(d.epilogue.bias_type, bias, uint64_t(d.epilogue.bias == BiasAxis::per_column ? col : row));
}

}  // namespace vkgemm::detail
