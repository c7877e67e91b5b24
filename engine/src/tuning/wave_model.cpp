#include "tuning/wave_model.hpp"

#include <algorithm>

namespace vkgemm::tuning {
namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

Machine machine_of(const DeviceInfo& device) noexcept {
  if (device.compute_units > 0) return {device.compute_units, false};
  return {kAssumedUnits, true};
}

uint32_t saturating_workgroups(const DeviceInfo& device, uint32_t invocations) noexcept {
  if (device.type == DeviceType::cpu) return 1;
  constexpr uint32_t kSaturatingInvocations = 256;
  return static_cast<uint32_t>(ceil_div(kSaturatingInvocations, std::max(1u, invocations)));
}

double main_seconds(const Machine& machine, const TileModel& tile, const Work& work, uint32_t splits) noexcept {
  splits = std::max(1u, splits);
  const uint64_t tiles = ceil_div(work.m, tile.bm) * ceil_div(work.n, tile.bn) * work.batch * splits;
  const uint64_t busiest = std::max<uint64_t>(ceil_div(tiles, machine.units), tile.saturating);
  const double k_slice = static_cast<double>(ceil_div(work.k, splits) + tile.k_overhead);
  const double tile_flops = 2.0 * tile.bm * tile.bn * k_slice;
  return kPassSeconds + static_cast<double>(busiest) * tile_flops / (tile.unit_gflops * 1e9);
}

double reduce_seconds(const Machine& machine, const TileModel& tile, const Work& work, uint32_t splits,
                      uint32_t element_size) noexcept {
  if (splits <= 1) return 0.0;
  const double bytes = static_cast<double>(work.m * work.n * work.batch) * (splits + 2) * element_size;
  const double bandwidth = machine.units * tile.unit_gflops * 1e9 / kFlopsPerByte;
  return bytes / bandwidth + kPassSeconds;
}

double calibrate_unit_gflops(const Machine& machine, TileModel tile, const Work& work, uint32_t splits,
                             double measured_gflops) noexcept {
  tile.unit_gflops = 1.0;
  const double at_one = main_seconds(machine, tile, work, splits) - kPassSeconds;  // the tiles at 1 GFLOP/s a unit
  const double measured = 2.0 * static_cast<double>(work.m * work.n * work.k * work.batch) / (measured_gflops * 1e9);
  // The pass's fixed cost is not the tiles' work: a small product measured in 16 us spent a quarter of it
  // there. A measurement shorter than 2 fixed costs says little about the tiles; it counts as twice that.
  return measured > 0.0 ? at_one / (std::max(measured, 2 * kPassSeconds) - kPassSeconds) : 1.0;
}

}  // namespace vkgemm::tuning
