// The host side of shaders/gemm_interface.glsl's push-constant block; the two must match.
#pragma once

#include <cstdint>

namespace vkgemm::kernels {

struct GemmPushConstants {
  uint32_t m, n, k;
  uint32_t lda, ldb, ldc;
  uint32_t a_offset, b_offset, c_offset;  // in elements, inside each binding
  uint32_t k_split;                       // split-K: the K range of one slice (K when not split)
  uint32_t split_stride;                  // split-K: elements between the slices' partial results
  uint32_t flags;                         // GEMM_VEC_*: operands that allow aligned vec4 access
};
static_assert(sizeof(GemmPushConstants) == 48);

inline constexpr uint32_t kVecA = 8, kVecB = 16, kVecC = 32;  // shaders/gemm_interface.glsl's GEMM_VEC_*

}  // namespace vkgemm::kernels
