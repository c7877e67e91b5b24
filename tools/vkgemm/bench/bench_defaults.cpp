#include "bench_defaults.hpp"

#include <algorithm>

namespace vkgemm::cli::bench {

SweepDefaults sweep_defaults(const DeviceInfo& device) {
  SweepDefaults d;
  if (device.type == DeviceType::cpu) {
    d.sizes = "32:128:x2";
    d.tiles = "8,16,32";
    d.latency_sizes = "16,32";
    d.repeat = 3;
    d.warmup = 1;
    d.latency_calls = 10;
    d.peak_target_ms = 2.0;
    d.peak_repeat = 1;
    return d;
  }
  d.sizes = "256:4096:x4";
  d.tiles = "16";
  d.latency_sizes = "16,64,256";
  d.latency_kernels = "auto";
  d.baseline_max = 1024.0 * 1024.0 * 1024.0;
  return d;
}

std::vector<uint32_t> latency_sizes_following(const std::vector<Shape>& squares) {
  std::vector<uint32_t> out;
  uint32_t smallest = 0;
  for (const Shape& s : squares) {
    if (s.m <= kLatencyMaxSize && std::find(out.begin(), out.end(), s.m) == out.end()) out.push_back(s.m);
    if (smallest == 0 || s.m < smallest) smallest = s.m;
  }
  if (out.empty() && smallest != 0) out.push_back(smallest);
  return out;
}

}  // namespace vkgemm::cli::bench
