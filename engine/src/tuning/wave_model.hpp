// The wave model: how long a grid of equal workgroups takes on a device, so that tiles and split-K are
// chosen by reasoning about the product's shape, not by the tuned shape nearest in log2.
//
// A device runs workgroups on `units` compute units (DeviceInfo::compute_units: NVIDIA SMs, AMD CUs, CPU
// threads). A unit reaches its full rate once it holds `saturating` workgroups of a tile; with the tiles
// spread evenly, the busiest unit holds ceil(tiles / units) of them, so the pass takes
//     pass + max(ceil(tiles / units), saturating) x (flops of one tile + its fixed cost) / (the unit's rate),
// where `pass` (kPassSeconds) is a dispatch's own fixed cost, barrier and all.
// That is wave quantization: 200 tiles on 132 SMs take as long as 264. Split-K multiplies the tiles and
// divides each one's K, and adds a reduce pass that streams the slices once. The unit's rate per tile
// configuration comes from the tuning table: a measured entry, inverted through the same formula
// (calibrate_unit_gflops); without one, only ratios between choices of one configuration matter.
#pragma once

#include <cstdint>

#include "vkgemm/device_info.hpp"

namespace vkgemm::tuning {

struct Machine {
  uint32_t units = 1;
  bool estimated = false;  // the device does not say (DeviceInfo::compute_units = 0): an assumed GPU size
};

// The device's compute units, else kAssumedUnits for a GPU that does not report them.
inline constexpr uint32_t kAssumedUnits = 64;
Machine machine_of(const DeviceInfo& device) noexcept;

// One kernel configuration as the model sees it.
struct TileModel {
  uint32_t bm = 0, bn = 0;      // the block of C one workgroup computes
  uint32_t saturating = 1;      // its workgroups one unit needs at once for its full rate
  uint32_t k_overhead = 0;      // the fixed cost of a workgroup (first loads, epilogue), in K steps of 1
  double unit_gflops = 1.0;     // one unit's rate with saturating workgroups
};

struct Work {
  uint64_t m = 0, n = 0, k = 0, batch = 1;
};

// Workgroups a unit needs at once for its full rate: about 8 subgroups of 32 (NVIDIA's and AMD's
// latency hiding for these kernels); a CPU thread runs one at a time.
uint32_t saturating_workgroups(const DeviceInfo& device, uint32_t invocations) noexcept;

// Seconds the main pass takes with `splits` K slices (1: unsplit).
double main_seconds(const Machine& machine, const TileModel& tile, const Work& work, uint32_t splits) noexcept;
// Seconds the split-K reduce pass adds: the slices read, C written (and read, beta != 0), at the bandwidth
// the tile's rate suggests (kFlopsPerByte), plus one pass's fixed cost. 0 for splits = 1.
double reduce_seconds(const Machine& machine, const TileModel& tile, const Work& work, uint32_t splits,
                      uint32_t element_size) noexcept;
// The unit rate that makes main_seconds equal a measured rate (GFLOP/s of the whole product): the tiles' rate
// once the pass's fixed cost is taken out.
double calibrate_unit_gflops(const Machine& machine, TileModel tile, const Work& work, uint32_t splits,
                             double measured_gflops) noexcept;

inline constexpr double kFlopsPerByte = 12.0;      // an FMA-bound GPU's flops per byte of memory bandwidth
// One dispatch, barrier and all: most of a tiny product's time (docs/design/planner.md).
inline constexpr double kPassSeconds = 4e-6;

}  // namespace vkgemm::tuning
