// The elements of a host matrix of any vkgemm type as doubles, read by a loader chosen once per pass (a
// switch on the type per element, and fp16's out-of-line conversion, cost the sampled check's passes over
// whole operands more than their arithmetic). Every type is exact as a double (element_access.hpp).
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "vkgemm/half.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::detail {

// Every fp16 bit pattern as a float, made once.
inline const float* half_table() {
  static const std::array<float, 65536> table = [] {
    std::array<float, 65536> t{};
    for (uint32_t i = 0; i < t.size(); ++i) t[i] = half_to_float(static_cast<uint16_t>(i));
    return t;
  }();
  return table.data();
}

// Calls f(load) with load(i) the i-th element of p as a double.
template <typename F>
void with_elements(DataType type, const void* p, F&& f) {
  switch (type) {
    case DataType::f32: f([q = static_cast<const float*>(p)](uint64_t i) { return double(q[i]); }); return;
    case DataType::f64: f([q = static_cast<const double*>(p)](uint64_t i) { return q[i]; }); return;
    case DataType::i32: f([q = static_cast<const int32_t*>(p)](uint64_t i) { return double(q[i]); }); return;
    case DataType::i8: f([q = static_cast<const int8_t*>(p)](uint64_t i) { return double(q[i]); }); return;
    case DataType::u8: f([q = static_cast<const uint8_t*>(p)](uint64_t i) { return double(q[i]); }); return;
    case DataType::f16:
      f([q = static_cast<const uint16_t*>(p), t = half_table()](uint64_t i) { return double(t[q[i]]); });
      return;
    case DataType::bf16:
      f([q = static_cast<const uint16_t*>(p)](uint64_t i) {
        return double(std::bit_cast<float>(static_cast<uint32_t>(q[i]) << 16));
      });
      return;
  }
}

}  // namespace vkgemm::detail
