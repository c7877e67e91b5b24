// Tuning the blocked kernel for a device: the candidate configurations, and the tuning file the engine
// reads at start (see EngineOptions::tuning_file). `vkgemm tune` drives these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkgemm/engine.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm {

// The shortest K slice the blocked kernel is split into: the planner's split counts and the tuner's both stop
// here. Slices this short still pay where they give each compute unit more warps (small products such as
// 1000^3 in 4 slices; docs/design/blocked.md).
inline constexpr uint32_t kMinBlockedSliceK = 128;

struct TuningEntry {
  DataType type = DataType::f32;
  uint32_t m = 0, n = 0, k = 0;
  Op op_a = Op::n, op_b = Op::n;  // of a row-major product (a column-major one is the row-major product of
                                  // B and A with m and n swapped: tune that)
  Kernel kernel = Kernel::blocked;  // the winner for this shape: blocked, or tiled where it was faster
  uint32_t tile = 0;                // tiled: its tile
  BlockedConfig config;  // blocked: its configuration, split_k included
  double gflops = 0.0;   // what it reached
};

// Every configuration of the blocked kernel's search space that `engine`'s device can run for `type`
// (split_k = 1). The space: blocks of 64 to 256 on a side, and 16 or 32 rows by 128 or 256 columns (short,
// wide products); bk 8/16/32, 4 to 16 rows or columns per invocation, 64 to 512 invocations, every warp
// layout (lanes 4 to 32).
std::vector<BlockedConfig> blocked_candidates(const Engine& engine, DataType type);

// The tuning file the engine reads by default: $VKGEMM_TUNING_FILE, else $XDG_CONFIG_HOME/vkgemm/tuning.json,
// else ~/.config/vkgemm/tuning.json.
std::string default_tuning_file();

// Merges `entries` for `device` (vendor, name, driver version) into the tuning file at `path` and returns the
// file's new text: created with its folders if missing; each entry replaces the one of its type, shape and
// ops; other shapes and other devices' tables are kept. Safe against other processes doing the same: the
// read-merge-write holds a lock on "<path>.lock", and the file is replaced whole (vkgemm/files.hpp), so no
// entry is lost and no reader sees a part. A file there that is not a valid tuning file is an error, never
// written over.
std::string write_tuning_file(const DeviceInfo& device, const std::vector<TuningEntry>& entries,
                              const std::string& path);
std::string write_tuning_file(const Engine& engine, const std::vector<TuningEntry>& entries, const std::string& path);

// Throws vkgemm::Error unless write_tuning_file could update `path` now (its folder, created if missing,
// writable; the file absent or valid): `vkgemm tune` checks this before it searches.
void check_tuning_file(const std::string& path);

}  // namespace vkgemm
