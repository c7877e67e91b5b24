// IEEE binary16 (fp16) on the host: conversions for f16 matrices, with round-to-nearest-even like the GPU's.
// C++20 has no half type (std::float16_t is C++23), so f16 data is held as uint16_t bit patterns.
#pragma once

#include <cstdint>

namespace vkgemm {

// Exact: every fp16 value is a float.
float half_to_float(uint16_t h) noexcept;
// Rounds to nearest, ties to even; overflow gives infinity, NaN stays NaN.
uint16_t float_to_half(float f) noexcept;

// bfloat16, held as uint16_t bit patterns too: the upper 16 bits of an f32.
// Exact: every bf16 value is a float.
float bfloat16_to_float(uint16_t b) noexcept;
// Rounds to nearest, ties to even (as the shaders do); overflow gives infinity, NaN stays NaN (quiet).
uint16_t float_to_bfloat16(float f) noexcept;

}  // namespace vkgemm
