// What an activation (vkgemm/blas.hpp's Activation) needs of the shaders, one rule for the door and the plan.
#pragma once

#include "vkgemm/blas.hpp"

namespace vkgemm::detail {

// GELU, SiLU, sigmoid and tanh need exp, which GLSL has for 32-bit floats only (shaders/epilogue.glsl keeps
// their cases out of the f64 variants: the door refuses them on f64), and cost each element special-function
// operations (auto weighs that: kernels/thin.cpp). An activation whose formula needs exp, log or the like
// joins them.
inline bool transcendental(Activation a) noexcept {
  return a == Activation::gelu_tanh || a == Activation::gelu_erf || a == Activation::silu ||
         a == Activation::sigmoid || a == Activation::tanh;
}

}  // namespace vkgemm::detail
