// The epilogue's checks at the door (blas.hpp's Epilogue): what a fused bias and activation
// apply to, refused with the argument named before any work.
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/activation.hpp"
#include "engine/epilogue_check.hpp"
#include "vkgemm/blas.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/names.hpp"

namespace vkgemm {
namespace {

// The activations f64 C takes, from the table (vkgemm/names.hpp): "relu, leaky-relu and clamp".
std::string f64_activations() {
  std::vector<std::string_view> taken;
  for (const char* name : enumeration_names("activation")) {
    const std::optional<Activation> a = parse_activation(name);
    if (a && *a != Activation::none && !detail::transcendental(*a)) taken.push_back(name);
  }
  std::string out;
  for (size_t i = 0; i < taken.size(); ++i) {
    out += i == 0 ? "" : i + 1 == taken.size() ? " and " : ", ";
    out += taken[i];
  }
  return out;
}

}  // namespace

int64_t bias_length(const GemmDesc& desc) noexcept {
  switch (desc.epilogue.bias) {
    case BiasAxis::per_column: return desc.n;
    case BiasAxis::per_row: return desc.m;
    case BiasAxis::none: break;
  }
  return 0;
}

int64_t scale_length(const GemmDesc& desc) noexcept {
  return desc.epilogue.scale == ScaleAxis::per_column ? desc.n : 0;
}

uint64_t bias_byte_offset(const GemmDesc& desc) noexcept { return uint64_t(scale_length(desc)) * 4; }

bool dequantizes(const GemmDesc& desc) noexcept {
  return (desc.type == DataType::i8 || desc.type == DataType::u8) && !is_integer(output_type(desc));
}

namespace detail {
namespace {

// The dequantization's own checks: an int8 product into float C, a scale it knows, a finite tensor_scale
// that is used, and K within the sums' exact range.
void check_scale(const GemmDesc& d) {
  const Epilogue& e = d.epilogue;
  if (e.scale != ScaleAxis::none && e.scale != ScaleAxis::per_tensor && e.scale != ScaleAxis::per_column) {
    throw Error(ErrorCode::invalid_argument, fmt::format("gemm: epilogue.scale {} is neither none, per_tensor nor "
                                                         "per_column", static_cast<int>(e.scale)));
  }
  if (e.scale != ScaleAxis::none && !dequantizes(d)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: epilogue.scale (a dequantization) applies to an i8 or u8 product into f32 or f16 "
                            "C; this is {} into {} (set c_type f32 or f16 on an i8 or u8 product)", to_string(d.type),
                            to_string(output_type(d))));
  }
  if (!std::isfinite(e.tensor_scale) || (e.scale == ScaleAxis::none && e.tensor_scale != 1.0)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: epilogue.tensor_scale {} {}", e.tensor_scale,
                            std::isfinite(e.tensor_scale) ? "is set but epilogue.scale is none (set per_tensor)"
                                                          : "is not finite"));
  }
  // The sums are exact 32-bit integers (the shaders' i32, or u32 for u8) below these K: |s| <= 2^14 K for
  // i8 and 255^2 K for u8 must stay under 2^31, past which a dequantized sum would have wrapped.
  const int64_t k_max = d.type == DataType::u8 ? 33025 : 131072;
  if (dequantizes(d) && d.k > k_max) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: a dequantizing {} product takes k up to {} (its 32-bit sums would wrap past it); "
                            "k is {}: split K into products of at most {} and add them (beta 1)",
                            to_string(d.type), k_max, d.k, k_max));
  }
}

// clamp's bounds: both given (neither has a default: 0 would zero C), lo <= hi.
void check_clamp(const Epilogue& e) {
  if (!e.lo || !e.hi) {
    const char* missing = !e.lo && !e.hi ? "lo and hi are" : !e.lo ? "lo is" : "hi is";
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: epilogue clamp needs both bounds, lo and hi; {} not set (set epilogue.lo and "
                            "epilogue.hi, lo <= hi)", missing));
  }
  if (!(*e.lo <= *e.hi)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: epilogue clamp needs lo <= hi (got lo {} and hi {})", *e.lo, *e.hi));
  }
}

}  // namespace

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
  check_scale(d);
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
                            "exp); {} are", to_string(e.activation), f64_activations()));
  }
  if (e.bias != BiasAxis::none && e.bias_type != DataType::f32 && e.bias_type != out) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: epilogue.bias_type {} must be f32 or C's type ({})", to_string(e.bias_type),
                            to_string(out)));
  }
  if (e.activation == Activation::leaky_relu && !std::isfinite(e.slope)) {
    throw Error(ErrorCode::invalid_argument, fmt::format("gemm: epilogue.slope {} is not finite", e.slope));
  }
  if (e.activation == Activation::clamp) check_clamp(e);
}

}  // namespace detail
}  // namespace vkgemm
