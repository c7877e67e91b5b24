// The epilogue's names and its checks at the door (blas.hpp's Epilogue): what a fused bias and activation
// apply to, refused with the argument named before any work.
#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "engine/epilogue_check.hpp"
#include "vkgemm/blas.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace {

constexpr std::array<std::pair<Activation, std::string_view>, 9> kNames{{
    {Activation::none, "none"},
    {Activation::relu, "relu"},
    {Activation::leaky_relu, "leaky-relu"},
    {Activation::gelu_tanh, "gelu-tanh"},
    {Activation::gelu_erf, "gelu-erf"},
    {Activation::silu, "silu"},
    {Activation::sigmoid, "sigmoid"},
    {Activation::tanh, "tanh"},
    {Activation::clamp, "clamp"},
}};

// GELU, SiLU, sigmoid and tanh need exp, which GLSL has for 32-bit floats only.
bool transcendental(Activation a) noexcept {
  return a == Activation::gelu_tanh || a == Activation::gelu_erf || a == Activation::silu ||
         a == Activation::sigmoid || a == Activation::tanh;
}

}  // namespace

std::string_view to_string(Activation activation) noexcept {
  for (const auto& [a, name] : kNames) {
    if (a == activation) return name;
  }
  return "unknown";
}

std::optional<Activation> parse_activation(std::string_view name) noexcept {
  for (const auto& [a, n] : kNames) {
    if (n == name) return a;
  }
  return std::nullopt;
}

int64_t bias_length(const GemmDesc& desc) noexcept {
  switch (desc.epilogue.bias) {
    case BiasAxis::per_column: return desc.n;
    case BiasAxis::per_row: return desc.m;
    case BiasAxis::none: break;
  }
  return 0;
}

namespace detail {

void check_epilogue(const GemmDesc& d) {
  const Epilogue& e = d.epilogue;
  if (to_string(e.activation) == "unknown") {
    throw Error(ErrorCode::invalid_argument, fmt::format("gemm: epilogue.activation {} is not one vkgemm knows",
                                                         static_cast<int>(e.activation)));
  }
  if (e.bias != BiasAxis::none && e.bias != BiasAxis::per_column && e.bias != BiasAxis::per_row) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: epilogue.bias {} is neither none, per_column nor per_row", static_cast<int>(e.bias)));
  }
  if (!e.active()) return;
  const DataType out = output_type(d);
  if (is_integer(out)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: an epilogue (bias or activation) applies to float C only; C is {} here (an {} "
                            "product's sums are exact integers)", to_string(out), to_string(d.type)));
  }
  if (out == DataType::f64 && transcendental(e.activation)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: epilogue.activation {} is not available for f64 C (the shaders have no double "
                            "exp); relu, leaky-relu and clamp are", to_string(e.activation)));
  }
  if (e.bias != BiasAxis::none && e.bias_type != DataType::f32 && e.bias_type != out) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: epilogue.bias_type {} must be f32 or C's type ({})", to_string(e.bias_type),
                            to_string(out)));
  }
  if (e.activation == Activation::leaky_relu && !std::isfinite(e.slope)) {
    throw Error(ErrorCode::invalid_argument, fmt::format("gemm: epilogue.slope {} is not finite", e.slope));
  }
  if (e.activation == Activation::clamp && !(e.lo <= e.hi)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: epilogue clamp needs lo <= hi (got lo {} and hi {})", e.lo, e.hi));
  }
}

}  // namespace detail
}  // namespace vkgemm
