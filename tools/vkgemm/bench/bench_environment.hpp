// vkgemm bench: where a run happened, for the result files.
#pragma once

#include <string>

#include "bench_result.hpp"

namespace vkgemm::cli::bench {

HostInfo host_info();         // the OS, the CPU model (it is the device on lavapipe) and its threads
std::string utc_now_iso();    // "2026-11-21T05:40:12Z"

}  // namespace vkgemm::cli::bench
