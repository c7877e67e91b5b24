// One peak kernel's dispatches, timed: the Vulkan side of vkgemm peak (descriptors, timestamp queries,
// one submission through the engine's Submitter), and the calibration that grows its work until a dispatch
// lasts long enough to time well.
#pragma once

#include <cstdint>
#include <vector>

#include "peak/peak_context.hpp"
#include "kernels/push_constants.hpp"
#include "kernels/registry.hpp"
#include "vkgemm/peak.hpp"

namespace vkgemm::detail::peak {

struct PeakKernel {
  kernels::LaunchShape shape;          // shader, workgroup size (specialization constant 0), ...
  uint32_t groups = 1;                 // a 1-D grid
  kernels::GemmPushConstants push{};   // push.k: the kernel's iteration count
  VkDescriptorBufferInfo src{}, dst{};  // bound at 0 (and 1) and at 2
};

// `warmup` untimed then `repeat` timed dispatches in one submission, a barrier between each; the GPU ms of
// each timed one. Needs timestamps (the caller checks).
std::vector<double> time_dispatches(const PeakContext& engine, const PeakKernel& kernel, uint32_t warmup, uint32_t repeat);

double median(std::vector<double> values);

// Builds the pipelines of every row measure_peaks will measure on this device, side by side
// (Pipelines::prepare), before the first is timed: on NVIDIA with a cold driver cache each takes up to
// seconds. Returns how many it built; one the driver refuses is left to its row, which says so when measured
// (peak.cpp). The caller holds the engine's lock.
size_t prepare_pipelines(const PeakContext& engine, const PeakOptions& options);

// The cache row's kernel (peak_cache.comp) over a buffer of `bytes` (rounded down to a power of two of 16-byte
// reads, at least 4 workgroups' worth), `groups` workgroups; src and dst left to the caller.
PeakKernel cache_kernel(const DeviceInfo& info, uint32_t groups, uint64_t bytes);

struct Timing {
  uint32_t target_iterations = 1;  // what push.k was grown to
  std::vector<double> gpu_ms;      // the timed dispatches
};

// Grows kernel.push.k from 1 (doubling, then by the measured rate) until the fastest of three dispatches lasts
// target_ms, up to max_iterations; then runs warm_ms of dispatches and `repeat` timed ones.
Timing calibrate_and_time(const PeakContext& engine, PeakKernel kernel, double target_ms, double warm_ms, uint32_t repeat,
                          uint32_t max_iterations);

}  // namespace vkgemm::detail::peak
