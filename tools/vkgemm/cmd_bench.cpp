// vkgemm bench: sweeps shapes x types x kernel configurations, verifying each case before timing it, then
// measures end-to-end latency of small products; a table on stdout, --json/--csv files, progress on stderr.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_case.hpp"
#include "bench/bench_ceiling.hpp"
#include "bench/bench_defaults.hpp"
#include "bench/bench_environment.hpp"
#include "bench/bench_files.hpp"
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

// Untimed calls run_latency makes before timing, for the progress estimate.
constexpr double kLatencyExtraCalls = 6;
// Rewrite the result files at most this often while the sweep runs, so a run that is cut short keeps them.
constexpr double kCheckpointSeconds = 5.0;

struct BenchOptions {
  std::string sizes, shapes, types = "all", kernels = "auto,all", tiles = "8,16,32";
  std::optional<std::string> latency_sizes;                 // absent: following --sizes, else the device's
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

struct SweepSpec {
  std::vector<Shape> shapes;
  std::vector<DataType> types;
  std::vector<Kernel> kernels;
  std::vector<uint32_t> latency_sizes;
  ConfigSpace space;
  double baseline_max = 0.0;  // naive and tiled only up to this m*n*k (0: every size)
};

// What to sweep: --sizes and --shapes govern every phase (the latency phase follows --sizes unless
// --latency-sizes is given); with neither, the device's defaults.
SweepSpec make_sweep(const BenchOptions& o, const SweepDefaults& d) {
  SweepSpec p;
  const bool no_sizes = o.sizes == "none";  // latency only
  std::vector<Shape> squares;
  if (!o.sizes.empty() && !no_sizes) squares = parse_sizes(o.sizes);
  p.shapes = squares;
  if (!o.shapes.empty()) {
    const auto more = parse_shapes(o.shapes);
    p.shapes.insert(p.shapes.end(), more.begin(), more.end());
  }
  const bool told = !p.shapes.empty() || no_sizes;
  if (!told) p.shapes = parse_sizes(d.sizes), p.baseline_max = d.baseline_max;
  p.types = parse_types(o.types);
  p.kernels = parse_kernels(o.kernels);
  p.space.tiles = parse_uint_list(o.tiles, "--tiles", kMaxTile);  // the device's own limits: a named skip
  if (o.latency_sizes) {
    if (*o.latency_sizes != "none") {
      for (const Shape& s : parse_sizes(*o.latency_sizes, "--latency-sizes")) p.latency_sizes.push_back(s.m);
    }
  } else if (told && !no_sizes) {
    p.latency_sizes = latency_sizes_following(squares);
  } else {
    for (const Shape& s : parse_sizes(d.latency_sizes, "--latency-sizes")) p.latency_sizes.push_back(s.m);
  }
  return p;
}

// Every option checked when the command line is parsed, before a device opens or a file is touched.
void check_options(const BenchOptions& o) {
  const SweepDefaults any = sweep_defaults(DeviceInfo{});
  (void)settings_of(o, any);
  (void)make_sweep(o, any);
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

bool applies(const std::vector<NotApplicable>& never, Kernel k, DataType t) {
  return std::none_of(never.begin(), never.end(), [&](const NotApplicable& n) { return n.kernel == k && n.type == t; });
}

void write_results(const BenchOptions& o, const Run& run) {
  if (!o.json_path.empty()) write_file(o.json_path, to_json(run));
  if (!o.csv_path.empty()) write_file(o.csv_path, to_csv(run));
}

struct Work {
  double device = 0.0, host = 0.0;  // multiply-adds dispatched, and checked on the CPU
};
struct Job {
  Shape shape;
  DataType type;
  BenchConfig config;
  bool latency;
  Work work;
};

// The host's multiply-adds for a case's check, for the progress estimate: the full reference's m*n*k; the
// sampled check's passes over A, B and C (each with its vectors) and its witnesses' sums (at most its budget).
double host_check_work(CheckHow how, const Shape& s) {
  if (how == CheckHow::none) return 0.0;
  if (how == CheckHow::full) return s.products();
  const double passes = 3.0 * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
  return passes + std::min(s.products(), double(SampleOptions{}.budget));
}

// The whole sweep up front, so the progress bar knows how much is left; pairs that never apply left out.
std::vector<Job> make_jobs(const SweepSpec& spec, const Settings& settings, const std::vector<NotApplicable>& never) {
  std::vector<Job> jobs;
  for (const Shape& s : spec.shapes)
    for (DataType t : spec.types)
      for (Kernel k : spec.kernels)
        for (BenchConfig& c : configurations(k, spec.space)) {
          if (!applies(never, k, t)) continue;
          const bool baseline = k == Kernel::naive || k == Kernel::tiled;
          if (baseline && spec.baseline_max > 0.0 && s.products() > spec.baseline_max) continue;
          const double checked = host_check_work(check_how(settings, s), s);
          jobs.push_back({s, t, std::move(c), false, {s.products() * (settings.repeat + settings.warmup + 1), checked}});
        }
  for (uint32_t n : spec.latency_sizes)
    for (DataType t : spec.types)
      for (Kernel k : spec.kernels) {
        if (!applies(never, k, t)) continue;
        const Shape s{n, n, n};
        jobs.push_back({s, t, configurations(k, spec.space).front(), true,
                        {s.products() * (settings.latency_calls + kLatencyExtraCalls), s.products()}});
      }
  return jobs;
}

// One job run, its result added to `run`; returns its table row (headers before the first of each kind).
struct Ran {
  std::string row;
  Status status = Status::skipped;
  double check_seconds = 0.0;
  double device_seconds = 0.0;  // of the timed dispatches and the untimed ones counted in Job::work
  bool checked = false;
};

Ran run_job(Engine& engine, const Job& job, size_t i, Run& run, size_t segment) {
  Ran out;
  const uint64_t seed = case_seed(run.settings.seed, i);
  if (!job.latency) {
    CaseResult r = run_case(engine, job.shape, job.type, job.config, run.settings, seed);
    r.segment = segment;
    if (i == 0) out.row = case_table_header();
    out.row += case_row(r);
    out.status = r.status, out.check_seconds = r.check_seconds, out.checked = r.check.has_value();
    if (r.timed()) out.device_seconds = r.stats->median * 1e-3 * (run.settings.repeat + run.settings.warmup + 1);
    run.cases.push_back(std::move(r));
  } else {
    LatencyResult r = run_latency(engine, job.shape.m, job.type, job.config, run.settings, seed);
    r.segment = segment;
    if (run.latency.empty()) out.row = latency_table_header();
    out.row += latency_row(r);
    out.status = r.status, out.check_seconds = r.check_seconds, out.checked = r.check.has_value();
    run.latency.push_back(std::move(r));
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
  for (const Job& job : jobs) total.device += job.work.device, total.host += job.work.host;
  Progress progress(jobs.size(), total.device, total.host, !o.no_progress);
  const auto start = std::chrono::steady_clock::now();
  auto last_write = start;
  try {
    for (size_t i = 0; i < jobs.size(); ++i) {
      const Job& job = jobs[i];
      const Shape& s = job.shape;
      progress.start(fmt::format("{} {}x{}x{} {} {} {}", job.latency ? "latency" : "throughput", s.m, s.n, s.k,
                                 to_string(job.type),
                                 to_string(job.config.options.kernel), job.config.label));
      const Ran ran = run_job(engine, job, i, run, steady.segment());
      progress.clear();
      fmt::print("{}", ran.row);
      std::fflush(stdout);
      // What ran: nothing when skipped, the one checked product when failed, everything otherwise.
      const double planned = job.work.device;
      const double done = ran.status == Status::skipped ? 0.0 : ran.status == Status::failed ? s.products() : planned;
      progress.finish(planned, job.work.host, done, ran.checked ? s.products() : 0.0, ran.check_seconds,
                      ran.device_seconds);
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
  const SweepSpec spec = make_sweep(o, defaults);
  run.settings.baseline_max = spec.baseline_max;
  run.not_applicable = not_applicable(engine, spec);
  if (!device.timestamps) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("vkgemm bench times dispatches with timestamp queries, and {}'s compute queue has none "
                            "(timestampValidBits is 0)",
                            device.name));
  }
  // The efficiency column's ceilings: the device's own, measured now, unless --peak-gflops gives f32's.
  if (!run.settings.peak_gflops) {
    if (!o.no_progress) fmt::print(stderr, "bench: measuring the device's ceilings (as vkgemm peak does)\n");
    PeakOptions peak;
    peak.repeat = defaults.peak_repeat;
    peak.target_ms = defaults.peak_target_ms;
    peak.warm_ms = run.settings.warmup_ms;  // the shared warm-up rule
    run.settings.ceilings = ceilings_from(measure_peaks(engine, peak));
  }
  run.vkgemm_version = version;
  run.vkgemm_commit = build_commit;  // the binary's own, never typed
  run.date = utc_now_iso();
  run.device = device;
  run.host = host_info();

  fmt::print("{}", run_header(run));
  std::fflush(stdout);
  sweep(engine, o, make_jobs(spec, run.settings, run.not_applicable), run);
  apply_steadiness(run);
  run.complete = true;
  write_results(o, run);
  fmt::print("{}", run_summary(run));
  if (!o.json_path.empty()) fmt::print("wrote {}\n", o.json_path);
  if (!o.csv_path.empty()) fmt::print("wrote {}\n", o.csv_path);

  bool any_failed = false;
  for (const auto& c : run.cases) any_failed |= c.status == Status::failed;
  for (const auto& l : run.latency) any_failed |= l.status == Status::failed;
  const bool unsteady = o.fail_unsteady && unsteady_count(run) > 0;
  return finish(engine, any_failed ? 1 : unsteady ? 4 : 0);
}

}  // namespace

Command add_bench_command(CLI::App& cmd, CommonOptions& common) {
  auto o = std::make_shared<BenchOptions>();
  cmd.add_option("--sizes", o->sizes,
                 "Square sizes N (N x N x N products): N, A:B:STEP (A to B in steps of STEP) or A:B:xF (A, A*F, ... "
                 "up to B; x2 doubles), comma-separated, or none (latency only) [default: 64:4096:x2 on a GPU (64:8192:x2 "
                 "with 3 GiB of device memory), 32:128:x2 on a CPU device]")
      ->check(non_empty_list());
  cmd.add_option("--shapes", o->shapes, "Rectangular products MxNxK (A is MxK, B is KxN), comma-separated; "
                                        "added to --sizes")
      ->check(non_empty_list());
  cmd.add_option("--types", o->types, fmt::format("Element types, comma-separated, or all ({})", type_names()))->capture_default_str()
      ->check(non_empty_list());
  cmd.add_option("--kernels", o->kernels,
                 fmt::format("Kernels, comma-separated: auto, or any of {}; all: every one of them. Kernel x type "
                             "pairs the device can never run are not cases: the header names them",
                             kernel_names()))
      ->capture_default_str()
      ->check(non_empty_list());
  cmd.add_option("--tiles", o->tiles, "Configurations of naive (workgroup side) and tiled (shared-memory tile "
                                      "side), 1 to 1024: one case per tile; ones the device cannot run are skipped")
      ->capture_default_str()
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
  cmd.add_option("--latency-sizes", o->latency_sizes,
                 "End-to-end latency (host wall time of one gemm call: record, submit, wait) at these n x n x n, for "
                 "each type and kernel (its first configuration); none to skip [default: the square --sizes up "
                 "to 256 (or the smallest) where --sizes or --shapes is given, else 16,64,256 on a GPU and 16,32 on "
                 "a CPU device]")
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
