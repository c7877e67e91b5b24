// vkgemm bench: the machine-readable results. JSON follows docs/bench.schema.json (described in
// docs/bench.md); CSV has one row per case with the same fields, flattened. Both are written whole or not
// at all (files::write_atomically, vkgemm/files.hpp), so a reader never sees half a file.
#pragma once

#include <string>

#include "bench_result.hpp"

namespace vkgemm::cli::bench {

inline constexpr int kJsonFormatVersion = 1;

std::string to_json(const Run& run);  // pretty-printed, ending in a newline
std::string to_csv(const Run& run);   // RFC 4180, a header row first

// Writes `text` to `path` atomically; throws vkgemm::Error(io_error) naming the path and the reason.
void write_file(const std::string& path, const std::string& text);

// Throws vkgemm::Error unless --json and --csv (each optional: empty) name different files that can be
// written: checked before a long sweep.
void check_outputs(const std::string& json_path, const std::string& csv_path);

}  // namespace vkgemm::cli::bench
