// The door's check of a GemmDesc's epilogue (check_gemm calls it): float C only, the bias type f32 or C's,
// no transcendental activation on f64, a finite slope, clamp's lo <= hi; a dequantization scale only on an
// int8 product into float C, with a finite tensor_scale and K within its sums' exact range. Throws
// vkgemm::Error.
#pragma once

#include "vkgemm/blas.hpp"

namespace vkgemm::detail {

void check_epilogue(const GemmDesc& desc);

// Whether desc's epilogue reads the fourth operand (its vectors): a bias, or per_column dequantization scales.
inline bool has_vector_operand(const GemmDesc& desc) noexcept {
  return desc.epilogue.bias != BiasAxis::none || desc.epilogue.scale == ScaleAxis::per_column;
}

}  // namespace vkgemm::detail
