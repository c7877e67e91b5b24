// vkgemm bench: what a sweep runs where the command line does not say, by device (the rule docs/bench.md
// states): on a GPU every type with auto and each kernel at three sizes, in under three minutes on an H100;
// on a CPU device (lavapipe) a sweep that finishes in well under a minute.
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
  std::string sizes;            // --sizes
  std::string tiles;            // --tiles: naive's and tiled's configurations
  std::string latency_sizes;    // --latency-sizes, when neither --sizes nor --shapes is given
  std::string latency_kernels;  // the latency cases' kernels when --kernels is not given (empty: the sweep's)
  uint32_t repeat = 10, warmup = 2, latency_calls = 100;
  double peak_target_ms = 0.0;  // the ceilings' measurement (PeakOptions::target_ms; 0: its own default)
  uint32_t peak_repeat = 3;
  double baseline_max = 0.0;  // the default sweep times naive and tiled up to this m*n*k (0: every size)
};

// On a GPU: sizes 256, 1024 and 4096, naive and tiled in one configuration each (tile 16, the engine's
// default) and only up to 1024^3, 10 timed dispatches, latency at 16, 64, 256 with 100 calls of auto. Every
// case on a GPU costs its warm-up by time (200 ms of device time, more until the speed settles), its inputs
// and its check, whatever its size (docs/bench.md gives the measured cost): the case count is what keeps the
// sweep within minutes, and past 1024^3 each baseline case takes seconds more. Other sizes, tiles and
// kernels are for --sizes, --tiles and --kernels to ask (they then apply at every size asked for). On a CPU device:
// 32 to 128 with tiles 8, 16, 32, 3 timed dispatches, latency at 16 and 32 with 10 calls of each kernel,
// the ceilings timed once over 2 ms dispatches.
SweepDefaults sweep_defaults(const DeviceInfo& device);

// The latency phase's sizes when --latency-sizes is not given but --sizes is: its square sizes up to
// kLatencyMaxSize, or the smallest of them when all are larger.
std::vector<uint32_t> latency_sizes_following(const std::vector<Shape>& squares);

}  // namespace vkgemm::cli::bench
