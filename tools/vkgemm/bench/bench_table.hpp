// vkgemm bench: the human-readable results on stdout, one row per case as it finishes.
#pragma once

#include <string>

#include "bench_result.hpp"

namespace vkgemm::cli::bench {

std::string run_header(const Run& run);       // device, driver, versions, settings, seed
std::string case_table_header();
std::string case_row(const CaseResult& c);
std::string latency_table_header();
std::string latency_row(const LatencyResult& l);
std::string run_summary(const Run& run);      // counts by status

}  // namespace vkgemm::cli::bench
