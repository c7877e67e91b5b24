// vkgemm bench: the host-memory cases (--host-sizes). Engine::gemm on host pointers, as a program with NumPy
// arrays or a BLAS call runs it: C poisoned and one call checked (the full reference up to --verify-max, the
// sampled check above), then --repeat calls timed by the host's clock, each copying A and B in and C out.
#pragma once

#include "bench_case.hpp"
#include "bench_result.hpp"

namespace vkgemm::cli::bench {

HostResult run_host(Engine& engine, uint32_t n, DataType type, const BenchConfig& config, const Settings& settings,
                    uint64_t seed, const ResultHook& hook = {});

}  // namespace vkgemm::cli::bench
