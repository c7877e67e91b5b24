// The host side of the push-constant block: shaders/gemm_abi.h declares it once, for C++ and GLSL alike.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gemm_abi.h"

namespace vkgemm::kernels {

inline constexpr uint32_t kTransA = GEMM_TRANS_A;
inline constexpr uint32_t kTransB = GEMM_TRANS_B;
inline constexpr uint32_t kBetaZero = GEMM_BETA_ZERO;
// lda (ldb, ldc), the offset and the batch stride of A (B, C) are multiples of 4: aligned vec4 access.
inline constexpr uint32_t kVecA = GEMM_VEC_A, kVecB = GEMM_VEC_B, kVecC = GEMM_VEC_C;

// The fields carry the shader's names (M, N, K, lda, ...; gemm_abi.h says what each holds).
struct GemmPushConstants {
#define VKGEMM_PUSH_UINT_FIELD(name) uint32_t name;
  GEMM_PUSH_UINT_FIELDS(VKGEMM_PUSH_UINT_FIELD)
#undef VKGEMM_PUSH_UINT_FIELD
  // alpha then beta in the shader's SCALAR_T (float, int32 or double), each element-size bytes (std430:
  // 8-byte doubles stay aligned at GEMM_PUSH_SCALARS_OFFSET).
  alignas(8) unsigned char scalars[16];
  // The fused epilogue (gemm_abi.h): 0 for none.
  uint32_t epilogue;
  uint32_t bias_offset;
  // Its parameters (act_a, act_b) in the epilogue's type (f32, or f64 for f64 sums), each 8 bytes at most.
  alignas(8) unsigned char act[16];
  // The dequantization's (gemm_abi.h): GEMM_SCALE_* or 0, and the scales' first word in binding 3.
  uint32_t scale;
  uint32_t scale_offset;
};
static_assert(offsetof(GemmPushConstants, scalars) == GEMM_PUSH_SCALARS_OFFSET, "the shader's alpha is at 64");
static_assert(offsetof(GemmPushConstants, epilogue) == GEMM_PUSH_EPILOGUE_OFFSET, "the epilogue's words are at 80");
static_assert(offsetof(GemmPushConstants, act) == GEMM_PUSH_ACT_OFFSET, "the epilogue's parameters are at 88");
static_assert(offsetof(GemmPushConstants, scale) == GEMM_PUSH_SCALE_OFFSET, "the dequantization's words are at 104");
static_assert(sizeof(GemmPushConstants) == GEMM_PUSH_BYTES, "the shader's block ends at 112");
static_assert(sizeof(GemmPushConstants) <= 128, "maxPushConstantsSize is at least 128 on every device");

}  // namespace vkgemm::kernels
