// Spreading the CPU reference over every core, by rows: what both comparisons (the plain product and the
// full BLAS call) use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace vkgemm::detail {

// Runs body(row_begin, row_end) over [0, m) on up to every core, in ranges of `per` rows (0: even
// shares); small jobs (under 2^22 units of `work`) stay on the calling thread.
template <typename F>
void parallel_rows(uint32_t m, uint64_t work, F&& body, uint32_t per = 0) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (per == 0) per = (m + cores - 1) / std::max(1u, cores);
  per = std::max(per, 1u);
  const unsigned threads = (m + per - 1) / per;
  if (work < (1u << 22) || threads <= 1) {
    for (uint32_t begin = 0; begin < m; begin += per) body(begin, std::min(m, begin + per));
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const uint32_t begin = std::min(m, t * per), end = std::min(m, begin + per);
    if (begin < end) pool.emplace_back([&body, begin, end] { body(begin, end); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace vkgemm::detail
