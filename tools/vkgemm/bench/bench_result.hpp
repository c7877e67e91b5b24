// vkgemm bench: what one run measured. The JSON and CSV files, the table and the report all read these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_sweep.hpp"
#include "steady.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/reference.hpp"

namespace vkgemm::cli::bench {

// Median, extremes and spread of a set of times (any unit; the field names say which).
struct Stats {
  size_t count = 0;
  double median = 0.0, min = 0.0, max = 0.0, mean = 0.0;
  double stddev = 0.0;      // sample standard deviation (0 for one sample)
  double spread_pct = 0.0;  // (max - min) / median, in percent: how far apart the runs were
};
// Throws vkgemm::Error(invalid_argument) on an empty set.
Stats summarize(std::vector<double> samples);

enum class Status {
  passed,      // checked (the full CPU reference, or the sampled check above --verify-max), then timed
  unverified,  // timed without a check (--no-check)
  failed,      // the result did not match the reference: reported, never timed
  skipped,     // the device cannot run it (a type or configuration it lacks, a matrix too large): never run
  unsteady,    // passed or unverified, but timed while the device's speed drifted (steady.hpp): the reason says
};
std::string_view to_string(Status status) noexcept;

// One of the device's measured ceilings (vkgemm peak), by its measurement's name: "f32 FMA",
// "f16 FMA (packed)", "coopmat 16x16x16 f16*f16+f32".
struct Ceiling {
  std::string name;
  double gflops = 0.0;
  uint32_t int8_products = 0;  // a derived emulation row's: the int8 products its value divides the int8 rate by
};

// The roofline (docs/bench.md, "The roofline"): a product cannot run faster than its compute ceiling
// (ceiling_for) nor than the memory moves its bytes at the copy rate vkgemm peak measured (its "copy" row:
// bytes read and written per second). The ceiling is the lesser of the two, and the bound the one that sets it.
struct Roofline {
  double gflops = 0.0;        // the lesser ceiling, in GFLOP/s (GOP/s for integer types)
  double memory_gflops = 0.0;  // operations / (bytes / copy rate)
  double bytes = 0.0;         // bytes_moved
  bool memory_bound = false;  // the memory's ceiling is the lesser (or the only one)
  std::string_view bound() const { return memory_bound ? "memory" : "compute"; }
};

// One throughput case: a shape, a type and a kernel configuration.
struct CaseResult {
  Shape shape;
  DataType type = DataType::f32;
  BenchConfig config;
  std::string ran;                      // the kernel and configuration that ran, auto and "default" resolved, as
                                        // GemmTiming says: "blocked 128x256x16 16x8 lanes 8 split 1 group 1"
  uint64_t seed = 0;                    // of this case's inputs
  Status status = Status::skipped;
  std::string reason;                   // skipped: the device's refusal; failed: what differed
  std::optional<Comparison> check;      // the comparison with the reference, when one was made
  std::vector<double> gpu_ms;           // one per timed dispatch (timestamps)
  WarmUp warmup;                        // the untimed products before them (steady.hpp's rule)
  size_t segment = 0;                   // the steadiness checks it ran between: segment and segment + 1
  std::optional<Stats> stats;           // of gpu_ms, when timed
  double gflops = 0.0;                  // 2*m*n*k / median time (GOP/s for integer types)
  double gflops_best = 0.0;             // 2*m*n*k / fastest time
  std::optional<double> efficiency;     // gflops over the ceiling of its type (ceiling_for), when there is one
  std::string efficiency_ceiling;       // which: "--peak-gflops", or a measured ceiling's name ("f32 FMA", ...)
  std::optional<Roofline> roofline;     // the lesser of that ceiling and the memory's, where the copy rate is known
  std::optional<double> roofline_fraction;  // gflops over roofline->gflops
  double check_seconds = 0.0;           // host time spent on the CPU reference (for the progress estimate)
  double data_seconds = 0.0;            // host time making the inputs and writing them to the device
  double wall_seconds = 0.0;            // the whole case's host wall time, inputs to the last timing
  bool timed() const { return stats.has_value(); }
};

// One end-to-end latency case: host wall time of Engine::gemm on device buffers (record, submit, wait).
struct LatencyResult {
  uint32_t size = 0;                    // an n x n x n product
  DataType type = DataType::f32;
  BenchConfig config;
  std::string ran;                      // as CaseResult::ran
  uint64_t seed = 0;
  Status status = Status::skipped;
  std::string reason;
  std::optional<Comparison> check;
  std::vector<double> wall_us;          // one per call
  WarmUp warmup;                        // the warm-up by time after the CPU check, before the timed calls
  size_t segment = 0;                   // as CaseResult::segment
  std::optional<Stats> stats;           // of wall_us
  // wall_us: Engine::gemm without timestamps (GemmOptions::timestamps false), the product alone.
  // Where the microseconds go, all medians: GemmPlan::record alone (of record_calls), Engine::gemm with
  // timestamps: its wall time, its GPU time (negative without), its submit-to-completion wait; the wall time per
  // product with `calls` products submitted back to back (Engine::submit) before the last is waited for;
  // and one plan submission at a time (a plan without timestamps): Engine::submit's host time, the wait for
  // it, and the two together (a synchronous product through a plan); and Engine::run of a plan with
  // timestamps, which resets them by a command (Engine::gemm resets its own on the host where it can); and
  // Engine::gemm without timestamps on alternating C buffers, which records every call (rerecord_us: what
  // wall_us's calls, replaying the recording of the call before, save).
  double rerecord_us = 0.0;
  double record_us = 0.0, gpu_us = -1.0, submit_wait_us = 0.0, inflight_us = 0.0;
  double plan_submit_us = 0.0, plan_wait_us = 0.0, plan_sync_us = 0.0, timed_plan_us = 0.0, timed_sync_us = 0.0;
  uint32_t record_calls = 0, calls = 0;
  double check_seconds = 0.0, data_seconds = 0.0, wall_seconds = 0.0;  // as CaseResult's
  bool timed() const { return stats.has_value(); }
};

// One host-memory case: Engine::gemm on host pointers (as NumPy through the drop-in BLAS or the Python module
// calls it), the copies of A and B in and C out with the product, timed by the host's clock
// (docs/design/host-copies.md): what the bus costs a caller and how much of it the copies beside the products
// hide.
struct HostResult {
  uint32_t size = 0;                    // an n x n x n product
  DataType type = DataType::f32;
  BenchConfig config;
  std::string ran;                      // as CaseResult::ran, with the panels where the product was cut
  uint64_t seed = 0;
  Status status = Status::skipped;
  std::string reason;
  std::optional<Comparison> check;
  std::vector<double> wall_ms;          // one per call: copies in, product, copies out
  WarmUp warmup;
  size_t segment = 0;
  std::optional<Stats> stats;           // of wall_ms
  // Of the median call: the product's GPU time (the panels' sum where cut), the host's time before its first
  // product was submitted and after its last completed.
  double gpu_ms = 0.0, upload_ms = 0.0, download_ms = 0.0;
  double bytes = 0.0;                   // crossing the bus: A and B in, C out
  double gflops = 0.0;                  // 2 n^3 / median wall time
  // bytes / (median wall - gpu_ms): the copies' rate as the caller pays for it. Above the bus's own rate
  // (vkgemm peak's host rows) exactly where copies ran beside the product.
  double copy_gbps = 0.0;
  double check_seconds = 0.0, data_seconds = 0.0, wall_seconds = 0.0;  // as CaseResult's
  bool timed() const { return stats.has_value(); }
};

struct Settings {
  uint32_t repeat = 10;                 // timed dispatches per case
  uint32_t warmup = 2;                  // untimed dispatches before them, besides the warm-up by time
  double warmup_ms = 0.0;               // the warm-up by device time before each case (steady.hpp)
  double steady_tolerance_pct = kSteadyTolerancePct;  // of the steadiness checks
  double verify_max = 0.0;              // largest m*n*k checked against the full CPU reference; larger products
                                        // get the sampled check (reference.hpp, check_sampled)
  bool check = true;                    // false (--no-check): cases are timed unchecked
  double baseline_max = 0.0;            // naive and tiled timed only up to this m*n*k (the default sweep on a
                                        // GPU, bench_defaults.hpp); 0: at every size
  std::optional<double> peak_gflops;    // --peak-gflops, for the efficiency column of f32 cases
  std::vector<Ceiling> ceilings;        // measured (vkgemm peak) when --peak-gflops is not given
  std::optional<double> copy_gbps;      // vkgemm peak's copy row, measured with them: the roofline's memory rate
  uint32_t latency_calls = 100;         // timed Engine::gemm calls per latency case
  uint64_t seed = 0;                    // of the whole run; each case's seed derives from it
};

struct HostInfo {
  std::string os;                       // uname: system and release
  std::string cpu;                      // /proc/cpuinfo model name, where there is one
  uint32_t threads = 0;                 // std::thread::hardware_concurrency
};

// A kernel x type pair the device can never run (Engine::check_supported's refusal): not a case.
struct NotApplicable {
  Kernel kernel = Kernel::automatic;
  DataType type = DataType::f32;
  std::string reason;
};

// The steadiness checks of a run (steady.hpp): the calibration product and each reading of it.
struct Steadiness {
  std::string product;
  std::vector<Checkpoint> checks;
};

struct Run {
  std::string vkgemm_version, vkgemm_commit, date;  // date: UTC, ISO 8601
  DeviceInfo device;
  HostInfo host;
  Settings settings;
  std::vector<CaseResult> cases;
  std::vector<LatencyResult> latency;
  std::vector<HostResult> host_products;
  Steadiness steadiness;
  std::vector<NotApplicable> not_applicable;  // named once in the header and the files
  bool complete = false;                // false while the sweep runs (the files are rewritten as it goes)
  double sweep_seconds = 0.0;           // host wall time of the sweep so far (the checks' share is reported)
};

}  // namespace vkgemm::cli::bench
