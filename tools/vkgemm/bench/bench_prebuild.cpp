#include "bench_prebuild.hpp"

#include <chrono>

#include "bench_case.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::cli::bench {
namespace {

// Whether the engine takes the call: the checks run_case and run_latency make before their first product.
bool admitted(const Engine& engine, const std::pair<GemmDesc, GemmOptions>& call) {
  try {
    engine.check_supported(call.first.type, call.second);
    engine.check_fits(call.first, call.second);
    return true;
  } catch (const Error& e) {
    if (!is_refusal(e)) throw;
    return false;
  }
}

}  // namespace

std::pair<GemmDesc, GemmOptions> job_call(const Job& job) {
  GemmDesc desc;
  desc.type = job.type;
  desc.c_type = default_output_type(job.type);
  desc.m = job.shape.m, desc.n = job.shape.n, desc.k = job.shape.k;
  return {desc, job.config.options};
}

Prebuilt prebuild(Engine& engine, const std::vector<Job>& jobs, unsigned threads) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::pair<GemmDesc, GemmOptions>> calls;
  for (const Job& job : jobs) {
    auto call = job_call(job);
    if (admitted(engine, call)) calls.push_back(std::move(call));
  }
  Prebuilt out;
  out.calls = calls.size();
  try {
    out.pipelines = engine.prepare(calls, threads);
  } catch (const Error& e) {
    // A limit only planning meets (a grid too large): each call alone, the refused ones left to their cases.
    if (!is_refusal(e)) throw;
    out.calls = 0;
    for (const auto& call : calls) {
      try {
        out.pipelines += engine.prepare({call}, threads);
        ++out.calls;
      } catch (const Error& refused) {
        if (!is_refusal(refused)) throw;
      }
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace vkgemm::cli::bench
