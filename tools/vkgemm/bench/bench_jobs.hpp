// vkgemm bench: the whole sweep as a list of jobs, made up front from what the command line says and the
// device's defaults (bench_defaults.hpp), so the progress estimate knows how much is left and a test can pin
// what a default sweep holds on a described device.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_defaults.hpp"
#include "bench_result.hpp"

namespace vkgemm::cli::bench {

// What the command line says about the sweep; an option left out is absent (or empty), and the device's
// default stands for it.
struct SweepRequest {
  std::string sizes, shapes, types = "all";
  std::optional<std::string> kernels, tiles, latency_sizes;
  std::string host_sizes;  // empty or none: no host-memory cases
};

struct SweepSpec {
  std::vector<Shape> shapes;
  std::vector<DataType> types;
  std::vector<Kernel> kernels;          // of the throughput cases
  std::vector<Kernel> latency_kernels;  // of the latency cases
  std::vector<uint32_t> latency_sizes;
  std::vector<uint32_t> host_sizes;     // the host-memory cases (bench_host.hpp), of the latency kernels
  ConfigSpace space;
  double baseline_max = 0.0;  // naive and tiled only up to this m*n*k, gemv and thin not at all (0: every size and
                              // kernel)
};

// What to sweep: --sizes and --shapes govern every phase (the latency phase follows --sizes unless
// --latency-sizes is given); with neither, the device's sizes and the cap on the baselines. --kernels
// governs both phases; without it the throughput cases take auto and every kernel, the latency cases the
// device's default. --tiles, or the device's. Throws vkgemm::Error(invalid_argument) naming a bad option.
SweepSpec make_sweep(const SweepRequest& request, const SweepDefaults& defaults);

// The work of one case, for the progress estimate (bench_progress.hpp).
struct Work {
  double device = 0.0;  // multiply-adds dispatched (the checked product, the untimed and timed ones)
  double host = 0.0;    // multiply-adds of the check on the host (the full reference, or the sampled check's)
  double data = 0.0;    // elements made on the host and written to the device (A, B and C's poison)
};

// A job's kind: a throughput case (bench_case.hpp's run_case), a latency case (run_latency) or a host-memory
// case (bench_host.hpp).
enum class JobKind { throughput, latency, host };
std::string_view to_string(JobKind kind) noexcept;

// The work of a case of this shape and kind (for the progress estimate).
Work case_work(const Shape& shape, const Settings& settings, JobKind kind);

struct Job {
  Shape shape;
  DataType type = DataType::f32;
  BenchConfig config;
  JobKind kind = JobKind::throughput;
  Work work;
};

// The whole sweep in the order it runs: each shape, each type, each kernel that applies (the pairs in
// `never` are left out) and each of its configurations; then the latency cases; then the host-memory cases.
std::vector<Job> make_jobs(const SweepSpec& spec, const Settings& settings, const std::vector<NotApplicable>& never);

}  // namespace vkgemm::cli::bench
