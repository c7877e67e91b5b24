// vkgemm bench: the steadiness checks' verdicts (steady.hpp's rule) applied to a run's results.
#pragma once

#include "bench_result.hpp"

namespace vkgemm::cli::bench {

// Every timed case and latency case (passed or unverified) whose segment the checks judge unsteady becomes
// `unsteady`, with the reason; the others keep their status. Call once, after the last check.
void apply_steadiness(Run& run);

// How many cases and latency cases are unsteady.
size_t unsteady_count(const Run& run);
// How many timed cases and latency cases had a warm-up that ended with the device still speeding up.
size_t unsettled_count(const Run& run);

}  // namespace vkgemm::cli::bench
