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
std::string host_table_header();
std::string host_row(const HostResult& h);
// Timed cases whose spread ((max - min) / median) is above this are called out as noisy in the summary.
constexpr double kNoisySpreadPct = 10.0;

// What a person reads first, after the rows: per type, the fastest kernel at each shape with its GFLOP/s
// and efficiency; the noisy and unsteady cases called out; the counts by status and the steadiness verdict.
std::string run_summary(const Run& run);

}  // namespace vkgemm::cli::bench
