// The blocked kernel's configuration and split-K for one product, chosen by shape: the caller's
// configuration, else the device's own tuning-table entry for exactly this shape (measured best there: the
// entry of these ops, else the untransposed one), else the
// measured configuration (of the device's tier of the table, tuning_table.hpp) and split count the wave
// model (tuning/wave_model.hpp) expects to finish first, else the fallback configuration with the split
// count the model gives it.
#pragma once

#include <cstdint>
#include <string>

#include "tuning/tuning_table.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/options.hpp"

namespace vkgemm::kernels {

inline constexpr uint32_t kMaxBlockedSplits = 32;

struct BlockedChoice {
  BlockedConfig config;     // split_k: the chosen count of K slices (1: unsplit)
  std::string reason;       // "caller", "tuned shape", "wave model (device table)", "fallback", ...
  double model_seconds = 0.0;  // the model's estimate (0 where it did not choose)
  double unit_gflops = 0.0;    // the chosen configuration's unit rate in the model (0 where it did not choose)
};

struct BlockedShape {
  uint32_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = false;  // as the kernel reads the operands (tuning::Entry's ops)
};

// Whether choose_blocked, without a caller's configuration, chooses among the table's measured configurations
// that fit the device (true) or takes the fallback (false).
bool has_measured_blocked(const DeviceInfo& device, const tuning::Table& table, DataType type);

BlockedChoice choose_blocked(const DeviceInfo& device, const tuning::Table& table, const GemmOptions& options,
                             DataType type, const BlockedShape& shape);

}  // namespace vkgemm::kernels
