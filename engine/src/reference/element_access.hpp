// Reading and writing one element of a host matrix of any vkgemm type as a double, for the CPU
// reference and its comparisons. Every type vkgemm has (f16, f32, f64, and i32 within its range) is exact
// as a double.
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
  }
  return 0.0;
}

// Rounds to the type (fp16: to nearest even, through float).
inline void store_element(DataType type, void* p, uint64_t i, long double v) {
  switch (type) {
    case DataType::f32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DataType::f64: static_cast<double*>(p)[i] = static_cast<double>(v); break;
    case DataType::i32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case DataType::f16: static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v)); break;
  }
}

}  // namespace vkgemm::detail
