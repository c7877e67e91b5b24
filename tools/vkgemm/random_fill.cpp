#include "random_fill.hpp"

#include <chrono>
#include <cstring>

#include "vkgemm/half.hpp"

namespace vkgemm::cli {

std::pair<double, double> random_range(DataType type) {
  switch (type) {
    case DataType::i32: return {-8, 9};
    case DataType::i8: return {-128, 128};
    case DataType::u8: return {0, 256};
    default: return {-1, 1};
  }
}

uint64_t fresh_seed() {
  std::random_device rd;
  const auto now = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return (uint64_t{rd()} << 32 ^ rd()) ^ now;
}

std::vector<std::byte> random_matrix(DataType type, uint64_t count, double lo, double hi, std::mt19937_64& rng) {
  std::vector<std::byte> out(count * element_size(type));
  switch (type) {
    case DataType::f32: {
      std::uniform_real_distribution<float> d(static_cast<float>(lo), static_cast<float>(hi));
      auto* p = reinterpret_cast<float*>(out.data());
      for (uint64_t i = 0; i < count; ++i) p[i] = d(rng);
      break;
    }
    case DataType::f64: {
      std::uniform_real_distribution<double> d(lo, hi);
      auto* p = reinterpret_cast<double*>(out.data());
      for (uint64_t i = 0; i < count; ++i) p[i] = d(rng);
      break;
    }
    case DataType::f16: {  // drawn as float, rounded to fp16
      std::uniform_real_distribution<float> d(static_cast<float>(lo), static_cast<float>(hi));
      auto* p = reinterpret_cast<uint16_t*>(out.data());
      for (uint64_t i = 0; i < count; ++i) p[i] = float_to_half(d(rng));
      break;
    }
    case DataType::bf16: {  // drawn as float, rounded to bf16 (nearest even)
      std::uniform_real_distribution<float> d(static_cast<float>(lo), static_cast<float>(hi));
      auto* p = reinterpret_cast<uint16_t*>(out.data());
      for (uint64_t i = 0; i < count; ++i) p[i] = float_to_bfloat16(d(rng));
      break;
    }
    case DataType::i32: {
      std::uniform_int_distribution<int32_t> d(static_cast<int32_t>(lo), static_cast<int32_t>(hi) - 1);
      auto* p = reinterpret_cast<int32_t*>(out.data());
      for (uint64_t i = 0; i < count; ++i) p[i] = d(rng);
      break;
    }
    case DataType::i8: case DataType::u8: {  // the bytes of values in [lo, hi), as two's complement or unsigned
      std::uniform_int_distribution<int32_t> d(static_cast<int32_t>(lo), static_cast<int32_t>(hi) - 1);
      for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<std::byte>(static_cast<uint8_t>(d(rng)));
      break;
    }
  }
  return out;
}

}  // namespace vkgemm::cli
