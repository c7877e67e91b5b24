// vkgemm bench: what a sweep runs where the command line does not say, by device (the rule docs/bench.md
// states): a GPU's full range, and on a CPU device (lavapipe) a sweep that finishes in well under a minute.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_sweep.hpp"
#include "vkgemm/device_info.hpp"

namespace vkgemm::cli::bench {

// Square sizes up to this take part in the latency phase when it follows --sizes.
constexpr uint32_t kLatencyMaxSize = 256;

struct SweepDefaults {
  std::string sizes;          // --sizes
  std::string latency_sizes;  // --latency-sizes, when neither --sizes nor --shapes is given
  uint32_t repeat = 10, warmup = 2, latency_calls = 100;
  double peak_target_ms = 0.0;  // the ceilings' measurement (PeakOptions::target_ms; 0: its own default)
  uint32_t peak_repeat = 3;
  double baseline_max = 0.0;  // the default sweep times naive and tiled up to this m*n*k (0: every size)
};

// On a GPU: sizes 64 to 4096 doubling (and 8192 where device memory holds three f64 matrices of it twice
// over), 10 timed dispatches, latency at 16, 64, 256 with 100 calls. On a CPU device: 32 to 128, 3 timed
// dispatches, latency at 16 and 32 with 10 calls, the ceilings timed once over 2 ms dispatches. On a GPU the
// default sweep times the baselines (naive, tiled) up to 1024^3: past it each of their cases takes seconds
// and the sweep would not end in minutes; --sizes or --shapes times them at every size asked for.
SweepDefaults sweep_defaults(const DeviceInfo& device);

// The latency phase's sizes when --latency-sizes is not given but --sizes is: its square sizes up to
// kLatencyMaxSize, or the smallest of them when all are larger.
std::vector<uint32_t> latency_sizes_following(const std::vector<Shape>& squares);

}  // namespace vkgemm::cli::bench
