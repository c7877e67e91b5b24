// The user's tuning file as a small database: read bounded, layered over the built-in tables, updated under
// a lock. Writers take an advisory lock (flock) on "<file>.lock" beside it around read-merge-write, so two
// `vkgemm tune` processes merge their entries instead of losing one's; the file itself is replaced by a
// rename (files::write_atomically), so a reader (which takes no lock) sees the old file or the new one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuning/tuning_table.hpp"

namespace vkgemm::tuning {

// The largest tuning file read: the built-in tables are tens of KB; a larger file is not one vkgemm wrote.
inline constexpr uint64_t kMaxTuningFileBytes = 16ull << 20;

// The text of the tuning file at `path`: a regular file of at most kMaxTuningFileBytes whose first
// non-blank byte is '{' (checked on its first bytes, before the rest is read). Throws vkgemm::Error naming
// the path otherwise.
std::string read_tuning_file(const std::string& path);

// Layers the user's file at `path` over `table` (Table::add_layer_json). A file that is not there is
// nothing tuned yet; one that cannot be read or parsed is reported on stderr once per process and path,
// and left out: the built-in tables still serve.
void load_user_tuning_file(Table& table, const std::string& path);

// Merges `entries` for `device` into the file at `path` under its lock and returns the file's new text.
std::string merge_into_tuning_file(const DeviceInfo& device, const std::vector<Entry>& entries,
                                   const std::string& path);

// Throws vkgemm::Error unless merge_into_tuning_file could update `path` now: its folder (created if
// missing) writable, the file absent or a valid tuning file, its lock file creatable.
void check_tuning_file_writable(const std::string& path);

}  // namespace vkgemm::tuning
