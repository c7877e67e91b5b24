// The host side of shaders/gemm_interface.glsl's push-constant block; the two must match.
#pragma once

#include <cstdint>

namespace vkgemm::kernels {

inline constexpr uint32_t kTransA = 1;    // GEMM_TRANS_A
inline constexpr uint32_t kTransB = 2;    // GEMM_TRANS_B
inline constexpr uint32_t kBetaZero = 4;  // GEMM_BETA_ZERO
// lda (ldb, ldc), the offset and the batch stride of A (B, C) are multiples of 4: aligned vec4 access.
inline constexpr uint32_t kVecA = 8, kVecB = 16, kVecC = 32;  // GEMM_VEC_A, _B, _C

struct GemmPushConstants {
  uint32_t m, n, k;
  uint32_t lda, ldb, ldc;
  uint32_t a_offset, b_offset, c_offset;  // in elements, inside each binding
  uint32_t stride_a, stride_b, stride_c;  // in elements, between batch entries; 0 broadcasts
  uint32_t batch;
  uint32_t flags;
  uint32_t k_split;       // split-K: the K range of one slice (K, at least 1, when not split)
  uint32_t split_stride;  // split-K: elements between the partial results of consecutive slices
  // alpha then beta in the accumulator's type (float, int32 or double), each element-size bytes: the
  // shader's `ACC_T alpha, beta` at offset 64 (std430: 8-byte doubles stay aligned there).
  alignas(8) unsigned char scalars[16];
};
static_assert(sizeof(GemmPushConstants) == 80, "the shader's block ends at 64 + 2 * 8 at most");
static_assert(sizeof(GemmPushConstants) <= 128, "maxPushConstantsSize is at least 128 on every device");

}  // namespace vkgemm::kernels
