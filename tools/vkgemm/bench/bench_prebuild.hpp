// vkgemm bench: every pipeline the sweep's cases will use, built before the first case runs, on several
// threads at once (Engine::prepare), so that no case's time holds a driver's compile (0.1 to 15 s each for a
// first use on NVIDIA with a cold driver cache) and the progress estimate sees cases alike.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "bench_jobs.hpp"
#include "vkgemm/engine.hpp"

namespace vkgemm::cli::bench {

// The product a job runs as the engine plans it: A and B of its type, C of the type's default output
// (bench_case.cpp: run_case and run_latency), alpha 1 and beta 0; its configuration's options.
std::pair<GemmDesc, GemmOptions> job_call(const Job& job);

struct Prebuilt {
  size_t calls = 0;      // the products planned (the jobs the device can run)
  size_t pipelines = 0;  // the pipelines built (those built before are not counted)
  double seconds = 0.0;  // host wall time, the planning included
};

// Builds the pipelines of every job the device can run, `threads` at a time (0: the engine's default). A job
// the engine refuses (its type, configuration, a limit, the device's memory) is left out: its case is
// skipped when it runs, with the reason. Any other error is thrown.
Prebuilt prebuild(Engine& engine, const std::vector<Job>& jobs, unsigned threads = 0);

}  // namespace vkgemm::cli::bench
