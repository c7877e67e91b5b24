// vkgemm bench: sweeps shapes x types x kernel configurations, verifying each case before timing it, then
// measures end-to-end latency of small products; a table on stdout, --json/--csv files, progress on stderr.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_case.hpp"
#include "bench/bench_ceiling.hpp"
#include "bench/bench_defaults.hpp"
#include "bench/bench_environment.hpp"
#include "bench/bench_files.hpp"
#include "bench/bench_host.hpp"
#include "bench/bench_jobs.hpp"
#include "bench/bench_prebuild.hpp"
#include "bench/bench_progress.hpp"
#include "bench/bench_steady.hpp"
#include "bench/bench_table.hpp"
#include "build_commit.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "random_fill.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {
namespace {

using namespace bench;

// Rewrite the result files at most this often while the sweep runs, so a run that is cut short keeps them.
constexpr double kCheckpointSeconds = 5.0;

struct BenchOptions {
  SweepRequest sweep;                                       // absent: the device's (bench_defaults.hpp)
  std::optional<int64_t> repeat, warmup, latency_calls;     // absent: the device's (bench_defaults.hpp)
  std::optional<double> warmup_ms;  // absent: the device's default (steady.hpp)
  double steady_tolerance = kSteadyTolerancePct;
  bool fail_unsteady = false;
  double verify_max = 2048.0 * 2048.0 * 2048.0;
  bool no_check = false;
  std::optional<double> peak_gflops;
  std::string json_path, csv_path;
  bool no_progress = false;
};

uint32_t in_range(const char* name, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} must be between {} and {} (got {})", name, lo, hi, v));
  }
  return static_cast<uint32_t>(v);
}

// The run's settings from the options and the device's defaults (checked once, when the command line is
// parsed, against any device's); the seed comes later.
Settings settings_of(const BenchOptions& o, const SweepDefaults& d) {
  Settings settings;
  settings.repeat = in_range("--repeat", o.repeat.value_or(d.repeat), 1, 100000);
  settings.warmup = in_range("--warmup", o.warmup.value_or(d.warmup), 0, 100000);
  settings.latency_calls = in_range("--latency-calls", o.latency_calls.value_or(d.latency_calls), 1, 1000000);
  if (o.warmup_ms && !(*o.warmup_ms >= 0.0 && *o.warmup_ms <= 10000.0)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--warmup-ms must be between 0 and 10000 ms of device time (got {})", *o.warmup_ms));
  }
  settings.warmup_ms = o.warmup_ms.value_or(-1.0);  // negative: the device's default, filled in once it is open
  if (!(o.steady_tolerance > 0.0 && o.steady_tolerance <= 1000.0)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--steady-tolerance must be a percentage above 0 and at most 1000 (got {})",
                            o.steady_tolerance));
  }
  settings.steady_tolerance_pct = o.steady_tolerance;
  if (!(o.verify_max >= 0.0)) {
    throw Error(ErrorCode::invalid_argument, fmt::format("--verify-max must be 0 or more (got {})", o.verify_max));
  }
  settings.verify_max = o.verify_max;
  settings.check = !o.no_check;
  if (o.peak_gflops && !(*o.peak_gflops > 0.0)) {
    throw Error(ErrorCode::invalid_argument, fmt::format("--peak-gflops must be positive (got {})", *o.peak_gflops));
  }
  settings.peak_gflops = o.peak_gflops;
  return settings;
}

// Every option checked when the command line is parsed, before a device opens or a file is touched.
void check_options(const BenchOptions& o) {
  const SweepDefaults any = sweep_defaults(DeviceInfo{});
  (void)settings_of(o, any);
  (void)make_sweep(o.sweep, any);
}

// The kernel x type pairs of the sweep the device can never run (the engine's refusal, whatever the shape):
// not cases, named once in the header.
std::vector<NotApplicable> not_applicable(const Engine& engine, const SweepSpec& spec) {
  std::vector<NotApplicable> out;
  for (Kernel k : spec.kernels)
    for (DataType t : spec.types) {
      try {
        GemmOptions options;
        options.kernel = k;
        engine.check_supported(t, options);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::unsupported_type && e.code() != ErrorCode::unsupported_config) throw;
        out.push_back({k, t, e.what()});
      }
    }
  return out;
}

void write_results(const BenchOptions& o, const Run& run) {
  if (!o.json_path.empty()) write_file(o.json_path, to_json(run));
  if (!o.csv_path.empty()) write_file(o.csv_path, to_csv(run));
}

// One job run, its result added to `run`; returns its table row (headers before the first of each kind) and
// where its time went.
struct Ran {
  std::string row;
  Status status = Status::skipped;
  Spent spent;  // its seconds: filled in by Progress::finish
  bool checked = false;
};

Ran run_job(Engine& engine, const Job& job, size_t i, Run& run, size_t segment) {
  Ran out;
  const uint64_t seed = case_seed(run.settings.seed, i);
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // The result with where its time went, its table row (its kind's header before the first) and its list.
  const auto keep = [&](auto r, auto& list, std::string (*header)(), auto row) {
    r.segment = segment;
    r.wall_seconds = seconds();
    if (list.empty()) out.row = header();
    out.row += row(r);
    out.status = r.status, out.checked = r.check.has_value();
    out.spent = {0.0, r.data_seconds, r.check_seconds, 0.0, r.warmup.busy_ms * 1e-3};
    list.push_back(std::move(r));
  };
  switch (job.kind) {
    case JobKind::throughput: {
      keep(run_case(engine, job.shape, job.type, job.config, run.settings, seed), run.cases, case_table_header,
           case_row);
      const CaseResult& r = run.cases.back();
      const double dispatches = run.settings.repeat + run.settings.warmup + 1;
      if (r.timed()) out.spent.device_seconds = r.stats->median * 1e-3 * dispatches;
      break;
    }
    case JobKind::latency:
      keep(run_latency(engine, job.shape.m, job.type, job.config, run.settings, seed), run.latency,
           latency_table_header, latency_row);
      break;
    case JobKind::host:
      keep(run_host(engine, job.shape.m, job.type, job.config, run.settings, seed), run.host_products,
           host_table_header, host_row);
      break;
  }
  return out;
}

// Every job in turn, a row each, the result files rewritten now and then so a run cut short keeps them.
void sweep(Engine& engine, const BenchOptions& o, const std::vector<Job>& jobs, Run& run) {
  SteadyCheck steady(engine, run.settings.warmup_ms, run.settings.steady_tolerance_pct);
  const auto check = [&] {
    steady.check();
    run.steadiness = {steady.product(), steady.checks()};
  };
  check();  // the reference
  Work total;
  for (const Job& job : jobs) total.device += job.work.device, total.host += job.work.host, total.data += job.work.data;
  Progress progress(jobs.size(), total, !o.no_progress);
  const auto start = std::chrono::steady_clock::now();
  auto last_write = start;
  try {
    for (size_t i = 0; i < jobs.size(); ++i) {
      const Job& job = jobs[i];
      const bench::Shape& s = job.shape;
      progress.start(fmt::format("{} {}x{}x{} {} {} {}", to_string(job.kind), s.m, s.n, s.k,
                                 to_string(job.type),
                                 to_string(job.config.options.kernel), job.config.label));
      const Ran ran = run_job(engine, job, i, run, steady.segment());
      progress.clear();
      fmt::print("{}", ran.row);
      std::fflush(stdout);
      // What ran: nothing when skipped, the one checked product when failed, everything otherwise.
      const bool skipped = ran.status == Status::skipped;
      const Work done{skipped ? 0.0 : ran.status == Status::failed ? s.products() : job.work.device,
                      ran.checked ? job.work.host : 0.0, skipped ? 0.0 : job.work.data};
      progress.finish(job.work, done, ran.spent);
      if (i + 1 == jobs.size() || steady.due()) check();
      run.sweep_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - last_write).count() > kCheckpointSeconds) {
        write_results(o, run);
        last_write = std::chrono::steady_clock::now();
      }
    }
  } catch (...) {
    progress.clear();
    try {
      write_results(o, run);  // what was measured before the error, marked incomplete
    } catch (const Error& e) {
      fmt::print(stderr, "vkgemm: also: {}\n", e.what());  // the first error is the one to report
    }
    throw;
  }
  progress.clear();
}

int run_bench(const BenchOptions& o, const CommonOptions& common) {
  Run run;
  check_outputs(o.json_path, o.csv_path);
  Engine engine = open_engine(common);
  const DeviceInfo& device = engine.device();
  const SweepDefaults defaults = sweep_defaults(device);
  run.settings = settings_of(o, defaults);
  run.settings.seed = common.seed.value_or(fresh_seed());
  run.settings.warmup_ms = default_warmup_ms(device, run.settings.warmup_ms);
  const SweepSpec spec = make_sweep(o.sweep, defaults);
  run.settings.baseline_max = spec.baseline_max;
  run.not_applicable = not_applicable(engine, spec);
  if (!device.timestamps) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("vkgemm bench times dispatches with timestamp queries, and {}'s compute queue has none "
                            "(timestampValidBits is 0)",
                            device.name));
  }
  const std::vector<Job> jobs = make_jobs(spec, run.settings, run.not_applicable);
  // Every case's pipelines now, side by side, so that no case's time holds a compile (bench_prebuild.hpp).
  if (!o.no_progress) fmt::print(stderr, "bench: building the pipelines of {} cases\n", jobs.size());
  const Prebuilt built = prebuild(engine, jobs);
  if (!o.no_progress) {
    fmt::print(stderr, "bench: built {} pipelines for {} of {} cases in {:.1f}s\n", built.pipelines, built.calls,
               jobs.size(), built.seconds);
  }
  // The efficiency column's ceilings: the device's own, measured now, unless --peak-gflops gives f32's.
  if (!run.settings.peak_gflops) {
    if (!o.no_progress) fmt::print(stderr, "bench: measuring the device's ceilings (as vkgemm peak does)\n");
    PeakOptions peak;
    peak.repeat = defaults.peak_repeat;
    peak.target_ms = defaults.peak_target_ms;
    peak.warm_ms = run.settings.warmup_ms;  // the shared warm-up rule
    const std::vector<PeakMeasurement> rows = measure_peaks(engine, peak);
    run.settings.ceilings = ceilings_from(rows);
    run.settings.copy_gbps = copy_rate(rows);
  }
  run.vkgemm_version = version;
  run.vkgemm_commit = build_commit;  // the binary's own, never typed
  run.date = utc_now_iso();
  run.device = device;
  run.host = host_info();

  fmt::print("{}", run_header(run));
  std::fflush(stdout);
  sweep(engine, o, jobs, run);
  apply_steadiness(run);
  run.complete = true;
  write_results(o, run);
  fmt::print("{}", run_summary(run));
  if (!o.json_path.empty()) fmt::print("wrote {}\n", o.json_path);
  if (!o.csv_path.empty()) fmt::print("wrote {}\n", o.csv_path);

  bool any_failed = false;
  for (const auto& c : run.cases) any_failed |= c.status == Status::failed;
  for (const auto& l : run.latency) any_failed |= l.status == Status::failed;
  for (const auto& h : run.host_products) any_failed |= h.status == Status::failed;
  const bool unsteady = o.fail_unsteady && unsteady_count(run) > 0;
  return finish(engine, any_failed ? 1 : unsteady ? 4 : 0);
}

}  // namespace

Command add_bench_command(CLI::App& cmd, CommonOptions& common) {
  auto o = std::make_shared<BenchOptions>();
  cmd.add_option("--sizes", o->sweep.sizes,
                 "Square sizes N (N x N x N products): N, A:B:STEP (A to B in steps of STEP) or A:B:xF (A, A*F, ... "
                 "up to B; x2 doubles), comma-separated, or none (latency only) [default: 256:4096:x4 on a GPU, "
                 "naive and tiled up to 1024; 32:128:x2 on a CPU device]")
      ->check(non_empty_list());
  cmd.add_option("--shapes", o->sweep.shapes, "Rectangular products MxNxK (A is MxK, B is KxN), comma-separated; "
                                              "added to --sizes")
      ->check(non_empty_list());
  cmd.add_option("--types", o->sweep.types, fmt::format("Element types, comma-separated, or all ({})", type_names()))
      ->capture_default_str()
      ->check(non_empty_list());
  cmd.add_option("--kernels", o->sweep.kernels,
                 fmt::format("Kernels, comma-separated: auto, or any of {}; all: every one of them. Kernel x type "
                             "pairs the device can never run are not cases: the header names them [default: auto,all; "
                             "the latency cases auto alone on a GPU]",
                             kernel_names()))
      ->check(non_empty_list());
  cmd.add_option("--tiles", o->sweep.tiles, "Configurations of naive (workgroup side) and tiled (shared-memory tile "
                                            "side), 1 to 1024: one case per tile; ones the device cannot run are "
                                            "skipped [default: 16 on a GPU, 8,16,32 on a CPU device]")
      ->check(non_empty_list());
  cmd.add_option("--repeat", o->repeat, "Timed dispatches per case (timestamps around each, a barrier between) "
                                        "[default: 10 on a GPU, 3 on a CPU device]");
  cmd.add_option("--warmup", o->warmup, "Untimed dispatches before them, besides the warm-up by time "
                                        "[default: 2 on a GPU, 1 on a CPU device]");
  cmd.add_option("--warmup-ms", o->warmup_ms,
                 fmt::format("Before each case's timed dispatches, untimed products until the device has been busy "
                             "this long and runs them at a settled speed (an idle GPU clocks down); 0: none "
                             "[default: {:g} on a GPU, 0 on a CPU device]",
                             kGpuWarmupMs));
  cmd.add_option("--steady-tolerance", o->steady_tolerance,
                 "Cases are unsteady when a steadiness check beside them read the calibration product more than "
                 "this many percent slower than the run's fastest check")
      ->capture_default_str();
  cmd.add_flag("--fail-unsteady", o->fail_unsteady, "Exit with 4 when a case is unsteady");
  cmd.add_option("--verify-max", o->verify_max,
                 "Check a case against the full CPU reference (double accumulation) when m*n*k is at most this, "
                 "and larger cases by the sampled check (witnesses in every tile and Freivalds's row sums, "
                 "docs/correctness.md); 0 samples every case [default: 2048^3 = 8589934592]");
  cmd.add_flag("--no-check", o->no_check, "Time every case without checking its result (status unverified)");
  cmd.add_option("--peak-gflops", o->peak_gflops,
                 "The device's FP32 peak in GFLOP/s, for the f32 cases' efficiency. Without it, the device's "
                 "ceilings are measured first (as vkgemm peak does) and each f32, f64 and f16 case is set against "
                 "its own: f32 or f64 FMA, the MMA of a coopmat shape, or f16 FMA; the header says which");
  cmd.add_option("--latency-sizes", o->sweep.latency_sizes,
                 "End-to-end latency (host wall time of one gemm call: record, submit, wait) at these n x n x n, for "
                 "each type and kernel (its first configuration); none to skip [default: the square --sizes up "
                 "to 256 (or the smallest) where --sizes or --shapes is given, else 16,64,256 on a GPU and 16,32 on "
                 "a CPU device]")
      ->check(non_empty_list());
  cmd.add_option("--host-sizes", o->sweep.host_sizes,
                 "Host-memory products at these n x n x n, for each type and latency kernel: Engine::gemm on host "
                 "pointers as NumPy and the drop-in BLAS call it, the copies in and out timed with the product "
                 "(host clock, --repeat calls), cut into panels where the engine's rule says; none to skip "
                 "[default: none]")
      ->check(non_empty_list());
  cmd.add_option("--latency-calls", o->latency_calls, "Timed calls per latency case; the median is reported "
                                                      "[default: 100 on a GPU, 10 on a CPU device]");
  cmd.add_option("--json", o->json_path, "Write the results as JSON (schema: docs/bench.schema.json)");
  cmd.add_option("--csv", o->csv_path, "Write the results as CSV, one row per case");
  cmd.add_flag("--no-progress", o->no_progress, "No progress on stderr");
  cmd.footer(
      "Each case: fresh random inputs (non-zero: magnitudes in [0.5, 1), integers 1 to 8, either sign) written to\n"
      "device buffers; one product checked against the CPU reference (status passed, or failed: reported and not\n"
      "timed, exit code 1); then --warmup and --repeat dispatches timed with timestamp queries: median, min, max,\n"
      "spread ((max-min)/median) and GFLOP/s (2*m*n*k / median; GOP/s for i32). A case the device cannot run\n"
      "(a missing feature, a limit) is skipped with the reason. Uploads and downloads are never timed.\n"
      "Steadiness: a fixed calibration product is timed at the start (warm), every 5 s and at the end; cases\n"
      "between two checks are unsteady when either check read it more than --steady-tolerance slower than the\n"
      "fastest check (the device's speed drifted: clocked down, throttled, shared).\n"
      "Exit codes: 0 all verified cases passed, 1 a case failed, 2 an error, 3 validation messages,\n"
      "4 a case was unsteady (with --fail-unsteady).");
  return {[o] { check_options(*o); }, [o, &common] { return run_bench(*o, common); }};
}

}  // namespace vkgemm::cli
