// The door's check of a GemmDesc's epilogue (check_gemm calls it): float C only, the bias type f32 or C's,
// no transcendental activation on f64, a finite slope, clamp's lo <= hi. Throws vkgemm::Error.
#pragma once

#include "vkgemm/blas.hpp"

namespace vkgemm::detail {

void check_epilogue(const GemmDesc& desc);

}  // namespace vkgemm::detail
