// The CPU reference of the fused epilogue (blas.hpp's Epilogue; shaders/epilogue.glsl is the GPU's), and
// what its own arithmetic may add to a result's error. One element: y = activation(x + bias), x = alpha s +
// beta c0. The bound a result is held to (docs/correctness.md, "Epilogues"):
//   |y_gpu - y_ref| <= L (e_x + u_s |x + bias|) + e_act(x + bias) + u_C |y_ref|
// where e_x is the product's own allowance for x (reference.hpp), u_s the sums' unit roundoff (the bias's
// addition), L the activation's largest slope (how far an error in its argument can move its value:
// 1 for ReLU, clamp and tanh, max(1, |slope|) for leaky ReLU, 0.25 for sigmoid, 1.13 for GELU, 1.1 for SiLU),
// e_act the activation's own rounding on the GPU, and u_C the rounding to C's type.
#pragma once

#include <cstdint>

#include "vkgemm/blas.hpp"

namespace vkgemm::detail {

// activation(x) in long double: the exact formula (std::tanh, std::erf, std::exp).
long double apply_activation(const Epilogue& e, long double x) noexcept;
// The activation's largest slope L (above).
double activation_slope_bound(const Epilogue& e) noexcept;
// e_act(x): what the shader's own evaluation of the activation at x may err by, in the sums' precision
// (unit roundoff u_s): the transcendental ones (exp within 3 + 2|x| ulp, erf's approximation within 1.5e-7)
// 2^-18 (1 + |x|) in fp32, leaky ReLU's 2 u_s |slope x| (the slope rounded to the sums' precision, then the
// product), clamp's u_s |bound| where a bound (rounded the same way) is the result, the others exact.
double activation_error(const Epilogue& e, double u_sums, double x) noexcept;
// Element (row, col) of C's bias (its logical row and column, whatever the layout); 0 without one.
double bias_at(const GemmDesc& d, const void* bias, int64_t row, int64_t col) noexcept;

}  // namespace vkgemm::detail
