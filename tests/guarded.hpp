// Host memory between guard regions, for the tests of the host-memory paths: a copy that writes a byte
// past its range shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkgemm::test {

inline constexpr std::byte kGuard{0xA5};
inline constexpr size_t kGuardBytes = 4096 + 64;

// `bytes` of host memory `skew` bytes past a 64-byte boundary, between guard regions.
class Guarded {
 public:
  Guarded(size_t bytes, size_t skew) : bytes_(bytes), store_(2 * kGuardBytes + bytes + 64, kGuard) {
    const auto base = reinterpret_cast<uintptr_t>(store_.data()) + kGuardBytes;
    at_ = reinterpret_cast<std::byte*>((base + 63) / 64 * 64 + skew);
  }
  std::byte* data() { return at_; }
  size_t size() const { return bytes_; }
  // Every byte outside [data, data + size) is still the guard's.
  bool guards_intact() const {
    for (const std::byte* p = store_.data(); p < store_.data() + store_.size(); ++p) {
      if ((p < at_ || p >= at_ + bytes_) && *p != kGuard) return false;
    }
    return true;
  }

 private:
  size_t bytes_;
  std::vector<std::byte> store_;
  std::byte* at_;
};

}  // namespace vkgemm::test
