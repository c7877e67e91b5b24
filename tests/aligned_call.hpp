// One product with every operand 16-byte aligned inside its buffer, between guard regions: the matrix kernels'
// fast paths (16-byte loads, fragments loaded and stored straight) need it, where support.hpp's check_gemm_call
// places every operand 3 elements past a boundary and so keeps a kernel on its checked loads. Random elements
// where the call describes them, NaN in the gaps (and in C where beta is 0), the guards checked untouched, C
// compared with the CPU reference.
#pragma once

#include <random>

#include "support.hpp"

namespace vkgemm::test {

ProductCheck check_aligned_call(Engine& e, const GemmDesc& desc, const GemmOptions& options,
                                std::mt19937_64& rng);
ProductCheck check_aligned_call(const GemmDesc& desc, const GemmOptions& options, std::mt19937_64& rng);

}  // namespace vkgemm::test
