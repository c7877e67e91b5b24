// The tuning table: for each device (vendor id, device name, driver version), the best blocked-kernel
// configuration the tuner measured for each type and shape. Tables come from the files the tuner writes
// (`vkgemm tune`): the built-in ones in engine/tuning/ embedded at build time, then the user's file.
// Tiers, as CLBlast's database has them: a device's own table (its driver's first, else another driver's),
// else its vendor's (a device's table marked "vendor_default": measured on one of that vendor's GPUs, the
// start for its others), else none (the kernels' defaults). The blocked kernel takes the tier's entries as its measured
// configurations and chooses among them by shape (kernels/blocked_choice.cpp); the tiled verdicts (f64)
// are read nearest-shape (lookup).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vkgemm/device_info.hpp"
#include "vkgemm/options.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::tuning {

struct Entry {
  DataType type = DataType::f32;
  uint32_t m = 0, n = 0, k = 0;
  // The kernel's operands as it reads them (a column-major call turned row-major: kernels/registry.hpp):
  // A stored k x m, B stored n x k. "op_a"/"op_b": "t" in the file; absent is "n".
  bool trans_a = false, trans_b = false;
  Kernel kernel = Kernel::blocked;  // the winner: blocked (with config) or tiled (with tile)
  uint32_t tile = 0;
  BlockedConfig config;
  double gflops = 0.0;  // what the tuner measured, for people reading the file
};

// The emulated product's measured cost model on one device (docs/design/ozaki.md, "Choosing it"): the int8
// products' rate, the split's and the merge's nanoseconds an element a modulus, and a fixed part, in the form
// kernels/ozaki.cpp's predicted_gain states, set against the native kernel's rate (the table's nearest
// entry, else the type's gflops here). Fitted to products measured on the device (tools/gpu/fit-emulation-cost.py;
// "measured" says which).
struct EmulationCost {
  double int8_ops = 0.0;  // per second
  double split_ns = 0.0, merge_ns = 0.0, fixed_us = 0.0;
  double f64_gflops = 0.0, f32_gflops = 0.0;
  std::string measured;
};

struct DeviceTable {
  uint32_t vendor_id = 0;
  std::string device;  // VkPhysicalDeviceProperties::deviceName
  std::string driver;  // DeviceInfo::driver_version
  std::vector<Entry> entries;
  bool vendor_default = false;  // also serves the devices of its vendor_id that have no table of their own
  std::optional<EmulationCost> emulation;  // absent: auto never emulates on this device
};

enum class Tier { device, vendor, none };
std::string_view to_string(Tier tier) noexcept;

// The types tuning tables hold entries for (f32, i32, f64); auto ranks the kernels of the others.
bool tuned_type(DataType type) noexcept;

class Table {
 public:
  // Adds the devices of a tuning file's JSON text; a later table for the same device and driver replaces
  // an earlier one. Throws vkgemm::Error(file_format) naming `origin` when the text is malformed.
  void add_json(std::string_view json, const std::string& origin);
  // Adds the devices of a user's tuning file on top of the tables already here: a device's entries are
  // layered over its existing table (the same driver's, else another driver's), replacing only the entries
  // of the shapes and ops they name, so that the built-in measurements still serve (and calibrate the wave
  // model) where the user tuned other shapes. The whole text is parsed before anything changes.
  void add_layer_json(std::string_view json, const std::string& origin);
  // The table serving this device and its tier: its own (the exact driver first), else its vendor's.
  std::pair<const DeviceTable*, Tier> find(const DeviceInfo& device) const;
  // The table serving this device for `type`: its own where it holds an entry of that type, else the last
  // vendor default holding one (a device tuned for f64 alone still plans f32 from its vendor's measurements,
  // and another device of the vendor plans f64 from it), else find(device)'s.
  std::pair<const DeviceTable*, Tier> find(const DeviceInfo& device, DataType type) const;
  // An entry measured one product. A batch of them is another workload (a batch of small squares fills the
  // device where one is latency-bound, and the single product's kernel can be 5x slower for the batch):
  // lookup and exact give none for batch > 1.
  // The nearest entry (in log2 of m, n, k) of this type in find(device, type)'s table, among those of these ops when it
  // has any (an op combination tuned apart), else among all.
  std::optional<Entry> lookup(const DeviceInfo& device, DataType type, uint32_t m, uint32_t n, uint32_t k,
                              bool trans_a = false, bool trans_b = false, uint32_t batch = 1) const;
  // The entry measured at exactly this shape of this type and kernel in find(device, type)'s table: the one of these ops,
  // else the untransposed one (where these ops were not tuned apart).
  std::optional<Entry> exact(const DeviceInfo& device, DataType type, Kernel kernel, uint32_t m, uint32_t n,
                             uint32_t k, bool trans_a = false, bool trans_b = false, uint32_t batch = 1) const;
  // Replaces (or adds) this device's entries for the shapes and ops in `entries`.
  void update(const DeviceInfo& device, const std::vector<Entry>& entries);
  std::string to_json() const;
  const std::vector<DeviceTable>& devices() const noexcept { return devices_; }
  // Counts the changes (add_json, add_layer_json, update): what was decided from the table before holds
  // while this stays the same (the engine's plan cache, engine/plan_cache.hpp).
  uint64_t generation() const noexcept { return generation_; }

 private:
  std::vector<DeviceTable> devices_;
  uint64_t generation_ = 0;
};

// The built-in tables (engine/tuning/*.json), embedded at build time: (file name, JSON text).
std::vector<std::pair<std::string, std::string_view>> builtin_tables();

}  // namespace vkgemm::tuning
