// Host memory between guard regions, for the tests of the host-memory paths: a copy that writes a byte
// past its range shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "support.hpp"
#include "vkgemm/reference.hpp"

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

// One f32 product on host memory `desc` describes, its random A, B and C each between guard regions at skews
// of 3, 17 and 61 bytes: what the call returned, whether A and B are as they were, whether every guard is
// intact (A, B, C), and C against the reference (the gaps of its lines included: they must be C's values).
struct GuardedHostRun {
  GemmTiming timing;
  bool a_unchanged = false, b_unchanged = false;
  bool guards_intact[3] = {};
  Comparison result;
};
inline GuardedHostRun guarded_host_gemm(Engine& e, const GemmDesc& d, std::mt19937_64& rng) {
  const size_t na = operand_extent(d, 'A').elements, nb = operand_extent(d, 'B').elements,
               nc = operand_extent(d, 'C').elements;
  const auto a = random_floats(na, rng), b = random_floats(nb, rng), c0 = random_floats(nc, rng);
  Guarded ga(na * 4, 3), gb(nb * 4, 17), gc(nc * 4, 61);
  std::memcpy(ga.data(), a.data(), na * 4), std::memcpy(gb.data(), b.data(), nb * 4);
  std::memcpy(gc.data(), c0.data(), nc * 4);
  GuardedHostRun run;
  run.timing = e.gemm(d, ga.data(), gb.data(), gc.data());
  std::vector<float> c(nc);
  std::memcpy(c.data(), gc.data(), nc * 4);
  run.a_unchanged = std::memcmp(ga.data(), a.data(), na * 4) == 0;
  run.b_unchanged = std::memcmp(gb.data(), b.data(), nb * 4) == 0;
  run.guards_intact[0] = ga.guards_intact(), run.guards_intact[1] = gb.guards_intact();
  run.guards_intact[2] = gc.guards_intact();
  run.result = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data());
  return run;
}

// The host paths' grid: `shape` (its sizes and leading dimensions) in both layouts, every op pair, beta 0 and
// 0.75, alpha -1.25, each passed to `f` with the call described in the test's messages.
template <typename F>
void each_layout_op_beta(const GemmDesc& shape, F&& f) {
  for (const Layout layout : {Layout::row_major, Layout::col_major}) {
    for (const Op op_a : {Op::n, Op::t}) {
      for (const Op op_b : {Op::n, Op::t}) {
        for (const double beta : {0.0, 0.75}) {
          GemmDesc d = shape;
          d.layout = layout, d.op_a = op_a, d.op_b = op_b;
          d.alpha = -1.25, d.beta = beta;
          INFO(describe(d));
          f(d);
        }
      }
    }
  }
}

}  // namespace vkgemm::test
