// vkgemm bench: one case, the careful way. Inputs are written to device buffers once (uploads are never
// timed); C is poisoned and one product is checked before any timing (against the full CPU reference up
// to --verify-max, by the sampled check above it); a case that fails the check is reported and not timed;
// then the timed dispatches (timestamps) or calls (latency).
#pragma once

#include <cstdint>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench_result.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::cli::bench {

// A seam for the tests: called on C (as read back from the device) before it is compared, so a test can
// make a product wrong and see it reported as failed and never timed. Empty in the program.
// `type` is C's: default_output_type of the inputs (f32 for f16 inputs).
using ResultHook = std::function<void(DataType type, void* c, uint64_t elements)>;

// How a case's product is checked: the full reference (m*n*k up to settings.verify_max), the sampled check
// (reference.hpp, check_sampled) above it, or not at all (--no-check).
enum class CheckHow { full, sampled, none };
CheckHow check_how(const Settings& settings, const Shape& shape);

// What the device cannot do (an unsupported type or configuration, too large, out of memory): a skipped case;
// anything else (a lost device, a driver error) ends the run.
bool is_refusal(const Error& e);

// `body`, the work of a case of `shape` whose result is `r`: what the device cannot do (is_refusal) and the
// host's memory running out for its inputs make `r` a skipped case with the reason, no check kept; anything
// else is thrown.
template <typename Result, typename Body>
void skipping_refusals(Result& r, const Shape& shape, Body&& body) {
  const auto skip = [&](std::string reason) {
    r.status = Status::skipped;
    r.reason = std::move(reason);
    r.check.reset();
  };
  try {
    body();
  } catch (const Error& e) {
    if (!is_refusal(e)) throw;
    skip(e.what());
  } catch (const std::bad_alloc&) {
    skip(fmt::format("not enough host memory for the inputs and the reference of {}x{}x{}", shape.m, shape.n,
                     shape.k));
  }
}

// The seed of case `index` of a run seeded with `run_seed` (SplitMix64, so neighbours differ widely).
uint64_t case_seed(uint64_t run_seed, uint64_t index);

// A case's inputs: `count` elements of `type` bounded away from zero (floats: magnitude in [0.5, 1), integers:
// 1 to 8, either sign; u8 positive), so no product is flattered by zeros and every element of C depends on
// every term.
std::vector<std::byte> nonzero_random(DataType type, uint64_t count, std::mt19937_64& rng);
// `count` elements of C's `type` no correct product holds (NaN, INT32_MIN), so one never written fails the check.
std::vector<std::byte> poison(DataType type, uint64_t count);

// Throughput: settings.repeat dispatches timed with timestamps after settings.warmup untimed ones.
CaseResult run_case(Engine& engine, const Shape& shape, DataType type, const BenchConfig& config,
                    const Settings& settings, uint64_t seed, const ResultHook& hook = {});

// End-to-end latency of an n x n x n product: host wall time of settings.latency_calls Engine::gemm calls
// on device buffers, each recording, submitting and waiting for one dispatch, after a few untimed calls.
LatencyResult run_latency(Engine& engine, uint32_t n, DataType type, const BenchConfig& config,
                          const Settings& settings, uint64_t seed, const ResultHook& hook = {});

}  // namespace vkgemm::cli::bench
