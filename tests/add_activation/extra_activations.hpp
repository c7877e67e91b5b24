// The C++ side of an activation added as docs/architecture.md says ("Adding an activation"), force-included by
// the add_activation build (tests/add_activation/CMakeLists.txt) as if written into the files it names: the
// test activation softsign, y = x / (1 + |x|), after the list's own.
#pragma once

#include <cmath>

// Its entry in engine/include/vkgemm/names.hpp's VKGEMM_ACTIVATIONS: the enumerator, its number (the next
// one, 9: extra_activations.glsl's GEMM_ACT_SOFTSIGN) and its spelling.
#define VKGEMM_EXTRA_ACTIVATIONS(X) X(softsign, "softsign")

// Its cases in engine/src/reference/epilogue.cpp: the exact formula (apply_activation, in long double); its
// largest slope L (activation_slope_bound: 1, at 0); the shader's own error e_act at argument x
// (activation_error): 1 + |x| and the quotient each rounded, the quotient within 2.5 ulp (Vulkan's float
// division), so at most 8 u_s |y|.
#define VKGEMM_EXTRA_ACTIVATION_FORMULAS \
  case Activation::softsign: return x / (1.0L + std::fabs(x));
#define VKGEMM_EXTRA_ACTIVATION_SLOPES \
  case Activation::softsign: return 1.0;
#define VKGEMM_EXTRA_ACTIVATION_ERRORS \
  case Activation::softsign: return 8.0 * u_sums * std::fabs(x) / (1.0 + std::fabs(x));
