// A device as JSON, in one place: the summary every result file carries (docs/bench.schema.json's
// "device") and the full record `vkgemm devices --json` prints (docs/devices.schema.json).
#pragma once

#include <nlohmann/json.hpp>

#include "vkgemm/device_info.hpp"

namespace vkgemm::cli {

// The keys a result file names its device by: identity, driver and the limits that explain a result.
nlohmann::ordered_json device_summary_json(const DeviceInfo& d);

// The summary and everything else `vkgemm devices` prints: limits, features, the cooperative-matrix shapes.
nlohmann::ordered_json device_full_json(const DeviceInfo& d);

// Whether the device lists int8 matrices (i8 * i8 + i32) for either cooperative-matrix kernel: where the
// ozaki kernel's products run on matrix units, and auto may take it (--precision emulated).
bool int8_matrices(const DeviceInfo& d);

}  // namespace vkgemm::cli
