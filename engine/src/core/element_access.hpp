// Reading and writing one element of a host matrix of any vkgemm type as a double, for the CPU
// reference and its comparisons. Every type vkgemm has (f16, bf16, f32, f64, i8, u8, and i32 within its
// range) is exact as a double.
#pragma once

#include <cstdint>

#include "vkgemm/half.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::detail {

inline double load_element(DataType type, const void* p, uint64_t i) {
  switch (type) {
    case DataType::f32: return static_cast<const float*>(p)[i];
    case DataType::f64: return static_cast<const double*>(p)[i];
    case DataType::i32: return static_cast<const int32_t*>(p)[i];
    case DataType::f16: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    case DataType::bf16: return bfloat16_to_float(static_cast<const uint16_t*>(p)[i]);
    case DataType::i8: return static_cast<const int8_t*>(p)[i];
    case DataType::u8: return static_cast<const uint8_t*>(p)[i];
  }
  return 0.0;
}

// An integer element (i32, i8, u8) as the int32 the shaders widen it to.
inline int32_t load_int(DataType type, const void* p, uint64_t i) {
  if (type == DataType::i8) return static_cast<const int8_t*>(p)[i];
  if (type == DataType::u8) return static_cast<const uint8_t*>(p)[i];
  return static_cast<const int32_t*>(p)[i];
}

// Rounds to the type (fp16 and bf16: to nearest even, through float; i8 and u8 wrap, as a cast does).
inline void store_element(DataType type, void* p, uint64_t i, long double v) {
  switch (type) {
    case DataType::f32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DataType::f64: static_cast<double*>(p)[i] = static_cast<double>(v); break;
    case DataType::i32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case DataType::f16: static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v)); break;
    case DataType::bf16: static_cast<uint16_t*>(p)[i] = float_to_bfloat16(static_cast<float>(v)); break;
    case DataType::i8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(static_cast<int32_t>(v)); break;
    case DataType::u8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(static_cast<int32_t>(v)); break;
  }
}

}  // namespace vkgemm::detail
