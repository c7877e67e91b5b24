// vkgemm bench's parts: the sweep syntax, configurations, statistics, the parallel comparison, and single
// cases on the device under validation (a wrong result must be reported failed and never timed; a
// configuration the device cannot run must be skipped with the reason). The command end to end, its
// files, their schema and the report are covered by test_bench_report.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/bench_case.hpp"
#include "bench/bench_defaults.hpp"
#include "bench/bench_files.hpp"
#include "bench/bench_host.hpp"
#include "bench/bench_jobs.hpp"
#include "bench/bench_prebuild.hpp"
#include "bench/bench_progress.hpp"
#include "bench/bench_steady.hpp"
#include "bench/bench_table.hpp"
#include "engine/engine_impl.hpp"
#include "parallel_compare.hpp"
#include "support.hpp"
#include "vkgemm/half.hpp"

using namespace vkgemm;
using namespace vkgemm::cli::bench;

namespace {

// A recorded default sweep (tests/data/default-bench-*.json) replayed through the progress estimate, case by
// case: after each case, the estimate of the time left (TimeEstimate on the cases so far, then
// sweep_seconds_left) against the time the sweep then took, as tools/gpu/sets/default-bench.sh judges it (from the
// tenth case on, where at least 10 s were left). Returns the worst error (estimate / truth - 1).
double worst_recorded_error(const char* path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path);
  const nlohmann::json run = nlohmann::json::parse(in);
  Settings settings;
  settings.repeat = run["settings"]["repeat"], settings.warmup = run["settings"]["warmup"];
  settings.verify_max = run["settings"]["verify_max"], settings.latency_calls = run["settings"]["latency_calls"];
  struct Row {
    Work work;
    Spent spent;
    size_t segment = 0;
  };
  std::vector<Row> rows;
  for (const char* phase : {"cases", "latency"}) {
    const bool latency = std::string(phase) == "latency";
    for (const auto& c : run[phase]) {
      const Shape s = latency ? Shape{c["n"], c["n"], c["n"]} : Shape{c["m"], c["n"], c["k"]};
      const double device = latency ? 0.0 : double(c["gpu_median_ms"]) * 1e-3 * (settings.repeat + settings.warmup + 1);
      // A latency case's warm-up is not in its record: its overhead holds it.
      const double warmup = c.value("warmup_busy_ms", 0.0) * 1e-3;
      rows.push_back({case_work(s, settings, latency ? JobKind::latency : JobKind::throughput),
                      {c["wall_seconds"], c["data_seconds"], c["check_seconds"], device, warmup}, c["segment"]});
    }
  }
  // Each case's end on the sweep's clock: the steadiness check that opens its segment, then the segment's cases.
  const std::vector<double> checks = run["steadiness_checks_at_s"];
  std::vector<double> end(rows.size());
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    double cases = 0.0;
    for (; j < rows.size() && rows[j].segment == rows[i].segment; ++j) cases += rows[j].spent.seconds;
    const size_t seg = rows[i].segment;
    double t = seg + 1 < checks.size() ? checks[seg + 1] - cases : checks[seg];  // the check done, its cases begin
    for (; i < j; ++i) end[i] = (t += rows[i].spent.seconds);
  }
  TimeEstimate estimate;
  Work left;
  for (const Row& r : rows) left.device += r.work.device, left.host += r.work.host, left.data += r.work.data;
  double worst = 0.0, cases_seconds = 0.0;
  for (size_t i = 0; i + 1 < rows.size(); ++i) {
    const Row& r = rows[i];
    estimate.add(r.work, r.spent);
    left.device -= r.work.device, left.host -= r.work.host, left.data -= r.work.data;
    cases_seconds += r.spent.seconds;
    const double cases = estimate.seconds_for(double(rows.size() - i - 1), left);
    const double estimated = sweep_seconds_left(cases, end[i] - end[0] + rows[0].spent.seconds, cases_seconds);
    const double truth = end.back() - end[i];
    if (i + 1 >= 10 && truth >= 10.0) worst = std::max(worst, std::abs(estimated / truth - 1.0));
  }
  return worst;
}

std::vector<uint32_t> sides(const std::vector<Shape>& shapes) {
  std::vector<uint32_t> out;
  for (const Shape& s : shapes) {
    REQUIRE(s.m == s.n);
    REQUIRE(s.n == s.k);
    out.push_back(s.m);
  }
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

BenchConfig config(Kernel kernel, uint32_t tile) {
  for (const BenchConfig& c : configurations(kernel, ConfigSpace{{tile}})) return c;
  FAIL("no configuration");
  return {};
}

Settings quick_settings() {
  Settings s;
  s.repeat = 3;
  s.warmup = 1;
  s.verify_max = 1e12;
  s.latency_calls = 4;
  return s;
}

// How many pipelines `engine` has created so far (kernels::Pipelines::created).
size_t pipelines_created(Engine& engine) { return detail::Access::impl(engine).pipelines->created(); }

// What a small sweep's cases gave: each one's status, what ran and C as checked (its bytes), in job order.
struct SweepOutcome {
  std::vector<Status> status;
  std::vector<std::string> ran;
  std::vector<std::vector<std::byte>> c;
};

SweepOutcome run_jobs(Engine& engine, const std::vector<Job>& jobs, const Settings& settings) {
  SweepOutcome out;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    std::vector<std::byte> c;
    const ResultHook keep = [&](DataType type, void* data, uint64_t elements) {
      const auto* bytes = static_cast<const std::byte*>(data);
      c.assign(bytes, bytes + elements * element_size(type));
    };
    const uint64_t seed = case_seed(settings.seed, i);
    if (job.kind == JobKind::latency) {
      const LatencyResult r = run_latency(engine, job.shape.m, job.type, job.config, settings, seed, keep);
      out.status.push_back(r.status), out.ran.push_back(r.ran);
    } else {
      const CaseResult r = run_case(engine, job.shape, job.type, job.config, settings, seed, keep);
      out.status.push_back(r.status), out.ran.push_back(r.ran);
    }
    out.c.push_back(std::move(c));
  }
  return out;
}

}  // namespace

TEST_SUITE("bench") {
  TEST_CASE("sizes: lists, steps, doubling, and errors that name the item") {
    CHECK(sides(parse_sizes("64")) == std::vector<uint32_t>{64});
    CHECK(sides(parse_sizes("16,7,300")) == std::vector<uint32_t>{16, 7, 300});
    CHECK(sides(parse_sizes("64:256:64")) == std::vector<uint32_t>{64, 128, 192, 256});
    CHECK(sides(parse_sizes("100:250:100")) == std::vector<uint32_t>{100, 200});
    CHECK(sides(parse_sizes("16:128:x2")) == std::vector<uint32_t>{16, 32, 64, 128});
    CHECK(sides(parse_sizes("3:100:x3,5")) == std::vector<uint32_t>{3, 9, 27, 81, 5});
    CHECK(parse_shapes("1024x512x256,7x1x3") == std::vector<Shape>{{1024, 512, 256}, {7, 1, 3}});

    CHECK(contains(error_of([] { parse_sizes("0"); }), "--sizes: '0' has 0, outside 1 to"));
    CHECK(contains(error_of([] { parse_sizes("64,,128"); }), "is not a list of whole numbers"));
    CHECK(contains(error_of([] { parse_sizes("abc"); }), "'abc'"));
    CHECK(contains(error_of([] { parse_sizes("256:64:x2"); }), "ends before it starts"));
    CHECK(contains(error_of([] { parse_sizes("16:64:x1"); }), "'16:64:x1' has 1, outside 2 to"));
    CHECK(contains(error_of([] { parse_sizes("16:64"); }), "neither N nor a range"));
    CHECK(contains(error_of([] { parse_sizes("1:100000:1"); }), "more than 10000 sizes"));
    CHECK(contains(error_of([] { parse_sizes("4294967296"); }), "outside 1 to"));
    CHECK(contains(error_of([] { parse_shapes("64x64"); }), "--shapes: '64x64' is not MxNxK"));
    CHECK(contains(error_of([] { parse_shapes("64x0x3"); }), "has 0"));
    CHECK(contains(error_of([] { parse_types("f32,f17"); }), "--types: 'f17' is not a type (f32"));
    CHECK(contains(error_of([] { parse_kernels("tiled,fast"); }), "--kernels: 'fast' is not a kernel (auto, naive"));
    CHECK(contains(error_of([] { parse_uint_list("8,-1", "--tiles", 1024); }), "--tiles: '-1'"));
    CHECK(parse_types("all").size() == std::size(all_data_types));
    CHECK(parse_kernels("all").size() == all_kernels().size());
    CHECK(parse_kernels("all").size() == 8);  // naive, tiled, blocked, gemv, thin, coopmat, coopmat2, ozaki
    // The default: auto and every kernel, each once however often it is named.
    const auto kernels = parse_kernels("auto,all,tiled,auto");
    CHECK(kernels.size() == 9);
    CHECK(kernels.front() == Kernel::automatic);
  }

  TEST_CASE("defaults that fit the device: a GPU's three sizes, a CPU device's quick sweep; latency follows --sizes") {
    DeviceInfo gpu, big_gpu, cpu;
    gpu.type = big_gpu.type = DeviceType::discrete_gpu;
    gpu.device_local_memory = uint64_t{2} << 30;
    big_gpu.device_local_memory = uint64_t{80} << 30;
    cpu.type = DeviceType::cpu;
    CHECK(sides(parse_sizes(sweep_defaults(gpu).sizes)) == std::vector<uint32_t>{256, 1024, 4096});
    CHECK(sweep_defaults(big_gpu).sizes == sweep_defaults(gpu).sizes);
    CHECK(sweep_defaults(gpu).repeat == 10);
    const SweepDefaults quick = sweep_defaults(cpu);
    CHECK(sides(parse_sizes(quick.sizes)) == std::vector<uint32_t>{32, 64, 128});
    CHECK(quick.repeat < sweep_defaults(gpu).repeat);
    CHECK(quick.latency_calls < sweep_defaults(gpu).latency_calls);
    CHECK(sides(parse_sizes(quick.latency_sizes)).back() <= 32);
    CHECK(quick.peak_target_ms > 0.0);
    // Latency at the given square sizes up to 256, or the smallest when all are larger.
    CHECK(latency_sizes_following(parse_sizes("32,48,512")) == std::vector<uint32_t>{32, 48});
    CHECK(latency_sizes_following(parse_sizes("4096,2048")) == std::vector<uint32_t>{2048});
    CHECK(latency_sizes_following({}).empty());
  }

  TEST_CASE("the default sweep on a discrete GPU: every type, auto and each kernel that applies, the baselines capped") {
    // An H100 as vkgemm sees it: 80 GiB, and the kernel x type pairs its engine refuses (its header's "not run").
    DeviceInfo h100;
    h100.type = DeviceType::discrete_gpu;
    h100.device_local_memory = uint64_t{80} << 30;
    std::vector<NotApplicable> never;
    const auto refuse = [&](Kernel k, std::initializer_list<DataType> types) {
      for (DataType t : types) never.push_back({k, t, "refused"});
    };
    refuse(Kernel::blocked, {DataType::i32, DataType::f16, DataType::bf16, DataType::i8, DataType::u8});
    refuse(Kernel::coopmat, {DataType::f32, DataType::i32, DataType::f64});
    refuse(Kernel::coopmat2, {DataType::f32, DataType::i32, DataType::f64});
    refuse(Kernel::ozaki, {DataType::i32, DataType::f16, DataType::bf16, DataType::i8, DataType::u8});
    const SweepDefaults d = sweep_defaults(h100);
    Settings settings;
    settings.repeat = d.repeat, settings.warmup = d.warmup, settings.latency_calls = d.latency_calls;
    settings.verify_max = 2048.0 * 2048.0 * 2048.0;
    const auto jobs = make_jobs(make_sweep(SweepRequest{}, d), settings, never);
    // What each size and type runs, in order: "kernel config, ...".
    std::map<std::pair<uint32_t, DataType>, std::string> cases, latency;
    for (const Job& j : jobs) {
      std::string& list = (j.kind == JobKind::latency ? latency : cases)[{j.shape.m, j.type}];
      list += fmt::format("{}{} {}", list.empty() ? "" : ", ", to_string(j.config.options.kernel), j.config.label);
    }
    // After auto, the kernels in the library's order (all_kernels) that take the type.
    const std::map<DataType, std::string> kernels = {
        {DataType::f32, ", blocked default, ozaki default"},    {DataType::i32, ""},
        {DataType::f64, ", blocked default, ozaki default"},    {DataType::f16, ", coopmat default, coopmat2 default"},
        {DataType::bf16, ", coopmat default, coopmat2 default"}, {DataType::i8, ", coopmat default, coopmat2 default"},
        {DataType::u8, ", coopmat default, coopmat2 default"}};
    for (const uint32_t n : {256u, 1024u, 4096u})
      for (const DataType t : all_data_types) {
        CAPTURE(n);
        CAPTURE(to_string(t));
        // naive and tiled in one configuration, and only up to 1024^3 (their cases take seconds past it).
        CHECK(cases[{n, t}] == "auto default" + std::string(n <= 1024 ? ", naive tile 16, tiled tile 16" : "") +
                                   kernels.at(t));
      }
    for (const uint32_t n : {16u, 64u, 256u})
      for (const DataType t : all_data_types) CHECK(latency[{n, t}] == "auto default");
    CHECK(cases.size() == 3 * std::size(all_data_types));
    CHECK(latency.size() == 3 * std::size(all_data_types));
    const auto throughput = std::count_if(jobs.begin(), jobs.end(), [](const Job& j) { return j.kind == JobKind::throughput; });
    CHECK(throughput == 85);
    CHECK(jobs.size() == 85 + 21);
    // --sizes, --tiles and --kernels ask for more: the baselines at every size asked for, each tile, the latency
    // cases of every kernel named.
    SweepRequest asked;
    asked.sizes = "8192", asked.tiles = "8,32", asked.kernels = "naive,coopmat";
    const SweepSpec spec = make_sweep(asked, d);
    CHECK(spec.baseline_max == 0.0);
    const auto more = make_jobs(spec, settings, never);
    CHECK(std::count_if(more.begin(), more.end(), [](const Job& j) { return j.kind == JobKind::throughput && j.shape.m == 8192; }) ==
          7 * 2 + 4);  // naive's two tiles for every type, coopmat for the four it takes
    CHECK(std::count_if(more.begin(), more.end(), [](const Job& j) { return j.kind == JobKind::latency; }) == 7 + 4);
    // A CPU device keeps its quick sweep: every tile and every kernel's latency.
    DeviceInfo cpu;
    cpu.type = DeviceType::cpu;
    const SweepSpec quick = make_sweep(SweepRequest{}, sweep_defaults(cpu));
    CHECK(quick.space.tiles == std::vector<uint32_t>{8, 16, 32});
    CHECK(quick.latency_kernels == quick.kernels);
    CHECK(quick.baseline_max == 0.0);
  }

  TEST_CASE("configurations: one per tile for the tunable kernels, labelled") {
    const auto naive = configurations(Kernel::naive, ConfigSpace{{8, 32}});
    REQUIRE(naive.size() == 2);
    CHECK(naive[0].options.kernel == Kernel::naive);
    CHECK(naive[0].options.tile == 8);
    CHECK(naive[1].label == "tile 32");
    const auto tiled = configurations(Kernel::tiled, ConfigSpace{{16}});
    REQUIRE(tiled.size() == 1);
    CHECK(tiled[0].options.kernel == Kernel::tiled);
    CHECK(tiled[0].options.tile == 16);
    for (Kernel k : all_kernels()) CHECK_FALSE(configurations(k, ConfigSpace{}).empty());
  }

  TEST_CASE("statistics") {
    const Stats odd = summarize({3.0, 1.0, 2.0});
    CHECK(odd.median == 2.0);
    CHECK(odd.min == 1.0);
    CHECK(odd.max == 3.0);
    CHECK(odd.mean == doctest::Approx(2.0));
    CHECK(odd.stddev == doctest::Approx(1.0));
    CHECK(odd.spread_pct == doctest::Approx(100.0));
    const Stats even = summarize({4.0, 1.0, 2.0, 10.0});
    CHECK(even.median == 3.0);
    CHECK(summarize({5.0}).stddev == 0.0);
    CHECK_THROWS_AS(summarize({}), Error);
    CHECK(Progress::duration_text(42.4) == "42s");
    CHECK(Progress::duration_text(65) == "1m05s");
    CHECK(Progress::duration_text(3725) == "1h02m");
  }

  TEST_CASE("time left: an overhead per case, device and host work at their measured rates") {
    TimeEstimate none;
    CHECK(none.seconds_for(3, {1e9, 1e9, 0}) < 0.0);
    // Cases that cost 0.1 s each, plus device work at 1e9 per second and host work at 1e8 per second.
    const auto seconds = [](double cases, double device, double host) { return cases * 0.1 + device / 1e9 + host / 1e8; };
    TimeEstimate e;
    for (const double work : {1e3, 1e6, 1e8, 1e9}) {
      e.add({work, work / 10, 0}, {seconds(1, work, work / 10), 0, work / 10 / 1e8, work / 1e9});
    }
    const double truth = seconds(2, 8e9, 1e9);
    CHECK(e.seconds_for(2, {8e9, 1e9, 0}) == doctest::Approx(truth).epsilon(0.01));
    // Noise in the overhead (a pipeline built, a busy host) is not taken for device work: small cases whose
    // times vary say nothing against the rate the timestamps measured (it once read thousands of hours).
    TimeEstimate noisy;
    for (int i = 0; i < 30; ++i) noisy.add({1e3, 0, 0}, {i % 2 ? 0.3 : 0.1, 0, 0, 1e3 / 1e9});
    CHECK(noisy.seconds_for(10, {1e12, 0, 0}) == doctest::Approx(10 * 0.2 + 1e12 / 1e9).epsilon(0.01));
    // Nothing timed yet: the rest takes the mean time of a case.
    TimeEstimate alike;
    for (int i = 0; i < 3; ++i) alike.add({1e3, 0, 0}, {0.5, 0, 0, 0});
    CHECK(alike.seconds_for(4, {1e9, 0, 0}) == doctest::Approx(2.0));
  }

  TEST_CASE("time left: a sweep's small cases predict its large ones' inputs and checks at their own rates") {
    // The default GPU sweep's shape: cases at 256^3 first, 4096^3 later. Each costs 0.7 s of overhead (its
    // buffers and submissions, and here its warm-up by time, not told apart), its inputs at 3e7 elements a second (the host making random numbers and
    // writing them), its check at 1e9 multiply-adds a second, its dispatches at 1e12.
    const auto spent = [](const Work& w) {
      return Spent{0.7 + w.data / 3e7 + w.host / 1e9 + w.device / 1e12, w.data / 3e7, w.host / 1e9, w.device / 1e12};
    };
    const auto work = [](double n, double checked) { return Work{13 * n * n * n, checked, 3 * n * n}; };
    TimeEstimate e;
    for (int i = 0; i < 20; ++i) e.add(work(256, 256.0 * 256 * 256), spent(work(256, 256.0 * 256 * 256)));
    const Work large = work(4096, 3e8);  // the sampled check's work
    const Work rest{10 * large.device, 10 * large.host, 10 * large.data};
    const double truth = 10 * spent(large).seconds;
    // The inputs are 16.8 s of the 35.7: taken for overhead, as the small cases' mean, they would read 7.
    CHECK(e.seconds_for(10, rest) == doctest::Approx(truth).epsilon(0.01));
  }

  TEST_CASE("time left: the warm-up by time, not the small cases' dispatch rate, sets larger cases' device time") {
    // The default sweep on an H100: each case's overhead 0.3 s and its warm-up by time 0.3 s of device time
    // whatever its size; its 13 timed dispatches take 0.01 ms each at 256^3 (bound by the launch: 1.7e12
    // multiply-adds a second), 0.07 ms at 1024^3 and 3 ms at 4096^3 (2.3e13 a second).
    const auto dispatch = [](double n) { return 13 * n * n * n; };
    TimeEstimate e;
    for (int i = 0; i < 20; ++i) e.add({dispatch(256), 0, 0}, {0.6 + 13 * 1e-5, 0, 0, 13 * 1e-5, 0.3});
    const Work rest{10 * dispatch(1024) + 10 * dispatch(4096), 0, 0};
    const double truth = 20 * 0.6 + 10 * 13 * 7e-5 + 10 * 13 * 3e-3;  // 12.4 s
    // The warm-up's 6 s, not the timed dispatches at 256^3's rate (5.4 s) on top of it (17.4 s, 40 % over).
    CHECK(e.seconds_for(20, rest) == doctest::Approx(truth).epsilon(0.05));
    // Products that outlast the warm-up (1 s a product, the warm-up one of them, 13 timed): the same products
    // take what the cases did; four times larger ones, their dispatches at the measured rate (the truth is 7 %
    // more: each one's warm-up, a product of 4 s).
    TimeEstimate slow;
    for (int i = 0; i < 5; ++i) slow.add({13e9, 0, 0}, {0.4 + 1.0 + 13.0, 0, 0, 13.0, 1.0});
    CHECK(slow.seconds_for(2, {26e9, 0, 0}) == doctest::Approx(2 * (0.4 + 1.0 + 13.0)));
    CHECK(slow.seconds_for(2, {104e9, 0, 0}) == doctest::Approx(2 * 0.4 + 104.0));
  }

  TEST_CASE("time left: a one-off stall in a small case does not set the rate of the inputs and checks") {
    // Ten cases at 256^3 whose inputs are made at 3.3e7 elements a second and checked at 4e9 multiply-adds a
    // second, but the first took 4 times as long for both (its allocations, the threads started).
    const double elements = 3.0 * 256 * 256, products = 256.0 * 256 * 256;
    TimeEstimate e;
    for (int i = 0; i < 10; ++i) {
      const double stall = i == 0 ? 4.0 : 1.0;
      const double data = stall * elements / 3.3e7, host = stall * products / 4e9;
      e.add({1e6, products, elements}, {0.5 + data + host + 1e-4, data, host, 1e-4, 0.0});
    }
    // Ten cases at 4096^3 (sampled checks, 4.2e8 multiply-adds): 15.3 s of inputs and 1.05 s of checks, where
    // the rates of the sums (2.5e7 and 3.1e9 a second) read 19.8 s and 1.37 s.
    const Work rest{0, 10 * 4.2e8, 10 * 3.0 * 4096 * 4096};
    const double truth = 10 * 0.5 + 10 * 1e-4 + rest.data / 3.3e7 + rest.host / 4e9;
    CHECK(e.seconds_for(10, rest) == doctest::Approx(truth).epsilon(0.01));
  }

  // The recorded default sweeps replayed through the estimate. The promise is 30 % from the tenth case on;
  // these bounds hold what the estimate does on each run, so a change that loses it fails.
  TEST_CASE("time left on a recorded default sweep (an H100, the driver's cache empty)") {
    // 106 cases in 110 s on the progress clock, every pipeline built before the first case (the empty cache
    // only slowed those builds). The estimate before this one (dispatches at 256^3's rate added to overheads
    // that hold the warm-up, rates of sums one case of which stalled) read 41 % too long at 19 cases on the
    // same binary's sweep; the mean overhead in place of the median reads 22 % here.
    const double worst = worst_recorded_error(VKGEMM_DEFAULT_BENCH_H100_COLD);
    MESSAGE(fmt::format("worst estimate of the time left: {:.1f} % off", 100 * worst));
    CHECK(worst <= 0.18);
  }

  TEST_CASE("time left on a recorded default sweep (an H100, the driver's cache warm)") {
    // The same binary's sweep right after, 108 s on the progress clock. With the mean overhead its printed
    // lines (whole seconds) read 31 % too long at 84 cases, 23 % here replayed unrounded: its 22 latency
    // cases, about 0.5 s each, charged the mean of cases that include several slow ones. The median: 16 %.
    const double worst = worst_recorded_error(VKGEMM_DEFAULT_BENCH_H100_WARM);
    MESSAGE(fmt::format("worst estimate of the time left: {:.1f} % off", 100 * worst));
    CHECK(worst <= 0.18);
  }

  TEST_CASE("warm-up: untimed batches doubling until the device has been busy long enough at a settled speed") {
    std::vector<uint32_t> batches;
    const cli::WarmUp w = cli::warm_up(100.0, [&](uint32_t n) {
      batches.push_back(n);
      return 10.0 * n;  // 10 ms a product
    });
    CHECK(batches == std::vector<uint32_t>{1, 2, 4, 8});  // 10, 30, 70, then 150 ms: enough, at one speed
    CHECK(w.busy_ms == 150.0);
    CHECK(w.dispatches == 15);
    CHECK(w.last_batch == 8);
    CHECK(w.settled);
    // A device still speeding up after the time: on until two batches run at the same speed (within 2 %).
    // Here product i takes 5 - 0.05 i ms, 1 ms from the 80th on: 100 ms have run within the batch of 16, the
    // batch of 64 still holds slower products than 128's, and 256 runs at 128's speed.
    uint32_t done = 0;
    const cli::WarmUp rising = cli::warm_up(100.0, [&](uint32_t n) {
      double ms = 0.0;
      for (uint32_t i = 0; i < n; ++i, ++done) ms += std::max(1.0, 5.0 - 0.05 * done);
      return ms;
    });
    CHECK(rising.last_batch == 256);
    CHECK(rising.settled);
    // One that never settles stops at 10 times the warm-up time, and says so.
    double per = 10.0;
    const cli::WarmUp never = cli::warm_up(100.0, [&](uint32_t n) { return n * (per *= 0.9); });
    CHECK_FALSE(never.settled);
    CHECK(never.busy_ms >= 10 * 100.0);
    CHECK(never.busy_ms < 10 * 100.0 + 10.0 * 4096);
    CHECK(cli::warm_up(0.0, [](uint32_t) { return 1.0; }).dispatches == 0);  // none asked: nothing runs
    CHECK(cli::warm_up(100.0, [](uint32_t) { return -1.0; }).dispatches == 0);  // no timestamps: it stops
    DeviceInfo gpu, cpu;
    gpu.type = DeviceType::discrete_gpu;
    cpu.type = DeviceType::cpu;
    CHECK(cli::default_warmup_ms(gpu) == cli::kGpuWarmupMs);
    CHECK(cli::default_warmup_ms(cpu) == 0.0);
    CHECK(cli::default_warmup_ms(cpu, 50.0) == 50.0);
  }

  TEST_CASE("steadiness: checks within the tolerance pass, a drift flags the segments beside it") {
    using cli::Checkpoint;
    const auto at = [](std::vector<double> ms) {
      std::vector<Checkpoint> out;
      for (size_t i = 0; i < ms.size(); ++i) out.push_back({5.0 * double(i), ms[i], 0.0});
      return out;
    };
    const auto steady = [](const std::vector<cli::Verdict>& v) {
      std::vector<bool> out;
      for (const auto& x : v) out.push_back(x.steady);
      return out;
    };
    // Steady: every check within 10% of the fastest.
    CHECK(steady(cli::judge_segments(at({1.00, 1.05, 0.98, 1.07}), 10.0)) == std::vector<bool>{true, true, true});
    // The device clocked down after the warm reference (a GPU timed without warm-up): every later segment.
    const auto cold = cli::judge_segments(at({1.0, 4.0, 3.9, 4.1}), 10.0);
    CHECK(steady(cold) == std::vector<bool>{false, false, false});
    CHECK(cold[0].slowdown == doctest::Approx(4.0));
    CHECK(contains(cold[0].reason, "4.00x its fastest"));
    CHECK(contains(cold[0].reason, "10% tolerance"));
    // One slow check in the middle: the segments on either side of it, not the others.
    CHECK(steady(cli::judge_segments(at({1.0, 1.0, 1.5, 1.0, 1.0}), 10.0)) ==
          std::vector<bool>{true, false, false, true});
    // A drift at the end (throttling): the last segment only.
    CHECK(steady(cli::judge_segments(at({1.0, 1.02, 1.2}), 10.0)) == std::vector<bool>{true, false});
    // A slow reference (the fastest check came later) flags the first segment.
    CHECK(steady(cli::judge_segments(at({1.3, 1.0, 1.0}), 10.0)) == std::vector<bool>{false, true});
    // Just inside and just outside the tolerance.
    CHECK(steady(cli::judge_segments(at({1.0, 1.099}), 10.0)) == std::vector<bool>{true});
    CHECK(steady(cli::judge_segments(at({1.0, 1.101}), 10.0)) == std::vector<bool>{false});
    // A series cut short after its reference: one segment, judged by it alone.
    CHECK(steady(cli::judge_segments(at({1.0}), 10.0)) == std::vector<bool>{true});
    CHECK(cli::judge_segments({}, 10.0).empty());
  }

  TEST_CASE("steadiness: the cases of an unsteady segment become unsteady, with the reason; others keep theirs") {
    Run run;
    run.settings.steady_tolerance_pct = 10.0;
    run.steadiness.checks = {{0.0, 1.0, 200.0}, {5.0, 1.0, 200.0}, {10.0, 2.0, 200.0}};
    for (const auto& [segment, status] : std::vector<std::pair<size_t, Status>>{
             {0, Status::passed}, {0, Status::unverified}, {1, Status::passed}, {1, Status::unverified},
             {1, Status::failed}, {1, Status::skipped}}) {
      CaseResult c;
      c.segment = segment;
      c.status = status;
      run.cases.push_back(c);
    }
    LatencyResult l;
    l.segment = 1;
    l.status = Status::passed;
    run.latency.push_back(l);
    apply_steadiness(run);
    CHECK(run.cases[0].status == Status::passed);
    CHECK(run.cases[1].status == Status::unverified);
    CHECK(run.cases[2].status == Status::unsteady);
    CHECK(contains(run.cases[2].reason, "drifted"));
    CHECK(run.cases[3].status == Status::unsteady);
    CHECK(run.cases[4].status == Status::failed);  // never timed: nothing to judge
    CHECK(run.cases[5].status == Status::skipped);
    CHECK(run.latency[0].status == Status::unsteady);
    CHECK(unsteady_count(run) == 3);
  }

  TEST_CASE("steadiness: the summary counts the timed cases whose warm-up ended still speeding up") {
    Run run;
    run.settings.steady_tolerance_pct = 10.0;
    run.steadiness.checks = {{0.0, 1.0, 200.0}};
    const auto timed = [](uint32_t dispatches, bool settled) {
      CaseResult c;
      c.status = Status::passed;
      c.stats = Stats{};
      c.warmup.dispatches = dispatches, c.warmup.settled = settled;
      return c;
    };
    run.cases = {timed(63, true), timed(0, false), CaseResult{}};  // settled; no warm-up (a CPU device); not timed
    CHECK(unsettled_count(run) == 0);
    CHECK_FALSE(contains(run_summary(run), "still sped up"));
    run.cases.push_back(timed(255, false));
    CHECK(unsettled_count(run) == 1);
    CHECK(contains(run_summary(run), "1 cases still sped up at the end of their warm-up"));
  }

  TEST_CASE("parallel_compare says what compare_with_reference says") {
    auto rng = test::case_rng("bench parallel_compare");
    for (DataType type : all_data_types) {
      const uint32_t m = 97, n = 45, k = 33;
      const DataType out = default_output_type(type);  // f16 inputs: C f32
      std::vector<std::byte> a(uint64_t{m} * k * element_size(type)), b(uint64_t{k} * n * element_size(type)),
          c(uint64_t{m} * n * element_size(out));
      std::uniform_int_distribution<int> d(-8, 8);
      const auto fill = [&](std::vector<std::byte>& v) {
        for (size_t i = 0; i < v.size() / element_size(type); ++i) {
          if (type == DataType::f32) reinterpret_cast<float*>(v.data())[i] = float(d(rng)) / 7.0f;
          if (type == DataType::f64) reinterpret_cast<double*>(v.data())[i] = double(d(rng)) / 7.0;
          if (type == DataType::i32) reinterpret_cast<int32_t*>(v.data())[i] = d(rng);
          if (type == DataType::f16) reinterpret_cast<uint16_t*>(v.data())[i] = float_to_half(float(d(rng)) / 7.0f);
        }
      };
      fill(a);
      fill(b);
      reference_gemm(type, out, m, n, k, a.data(), b.data(), c.data());
      // Wrong elements in two different row blocks: the count, the first one and the norm must agree.
      for (const uint64_t i : {uint64_t{50} * n + 3, uint64_t{90} * n + 7}) {
        if (out == DataType::f32) reinterpret_cast<float*>(c.data())[i] += 0.25f;
        if (out == DataType::f64) reinterpret_cast<double*>(c.data())[i] += 0.25;
        if (out == DataType::i32) reinterpret_cast<int32_t*>(c.data())[i] += 1;
      }
      const Comparison serial = compare_with_reference(type, m, n, k, a.data(), b.data(), c.data());
      const Comparison parallel = cli::parallel_compare(type, m, n, k, a.data(), b.data(), c.data(), 4);
      INFO(to_string(type), ": ", serial.summary(), " vs ", parallel.summary());
      CHECK_FALSE(parallel.passed);
      CHECK(parallel.bad_elements == serial.bad_elements);
      CHECK(parallel.first_bad == serial.first_bad);
      CHECK(parallel.bound == serial.bound);
      CHECK(parallel.normwise_error == doctest::Approx(serial.normwise_error).epsilon(1e-9));
      if (std::isinf(serial.worst_element_ratio)) {  // i32: any difference is infinitely far
        CHECK(std::isinf(parallel.worst_element_ratio));
      } else {
        CHECK(parallel.worst_element_ratio == doctest::Approx(serial.worst_element_ratio).epsilon(1e-12));
      }
      reference_gemm(type, out, m, n, k, a.data(), b.data(), c.data());
      CHECK(cli::parallel_compare(type, m, n, k, a.data(), b.data(), c.data(), 4).passed);
    }
  }

  TEST_CASE("a case is verified, then timed") {
    for (DataType type : all_data_types) {
      const CaseResult r = run_case(test::engine(), {37, 29, 19}, type, config(Kernel::tiled, 8), quick_settings(), 7);
      INFO(to_string(type), " ", r.reason);
      CHECK(r.status == Status::passed);
      REQUIRE(r.check.has_value());
      CHECK(r.check->passed);
      REQUIRE(r.timed());
      CHECK(r.gpu_ms.size() == 3);
      CHECK(r.stats->min > 0.0);
      CHECK(r.gflops == doctest::Approx(2.0 * 37 * 29 * 19 / r.stats->median * 1e-6));
      CHECK_FALSE(r.efficiency.has_value());  // no --peak-gflops
    }
  }

  TEST_CASE("a wrong result is reported failed and never timed") {
    int calls = 0;
    const ResultHook corrupt = [&](DataType type, void* c, uint64_t elements) {  // one element, mid-matrix
      ++calls;
      if (type == DataType::f32) static_cast<float*>(c)[elements / 2] += 0.5f;
      if (type == DataType::f64) static_cast<double*>(c)[elements / 2] += 0.5;
      if (type == DataType::i32) static_cast<int32_t*>(c)[elements / 2] += 1;
    };
    for (DataType type : all_data_types) {
      const CaseResult r =
          run_case(test::engine(), {31, 17, 23}, type, config(Kernel::naive, 8), quick_settings(), 11, corrupt);
      INFO(to_string(type));
      CHECK(r.status == Status::failed);
      CHECK_FALSE(r.timed());
      CHECK(r.gpu_ms.empty());
      REQUIRE(r.check.has_value());
      CHECK(r.check->bad_elements == 1);
      CHECK(contains(r.reason, "index 263"));  // 31 * 17 / 2
      const LatencyResult l = run_latency(test::engine(), 16, type, config(Kernel::tiled, 8), quick_settings(), 3, corrupt);
      CHECK(l.status == Status::failed);
      CHECK_FALSE(l.timed());
      const HostResult h = run_host(test::engine(), 16, type, config(Kernel::tiled, 8), quick_settings(), 3, corrupt);
      CHECK(h.status == Status::failed);
      CHECK_FALSE(h.timed());
      CHECK(h.wall_ms.empty());
      Settings sampled = quick_settings();  // the same wrong element, by the sampled check
      sampled.verify_max = 0.0;
      const CaseResult s = run_case(test::engine(), {31, 17, 23}, type, config(Kernel::naive, 8), sampled, 11, corrupt);
      CHECK(s.status == Status::failed);
      CHECK_FALSE(s.timed());
      REQUIRE(s.check.has_value());
      CHECK(s.check->sampled.has_value());
    }
    CHECK(calls == 4 * static_cast<int>(std::size(all_data_types)));
  }

  TEST_CASE("host-memory products: checked, then timed by the host's clock, the copies with the product; cut into panels") {
    auto paneled = test::with_panels(16, [] { return test::make_engine(); });
    const bool cut = paneled->device().host_import;
    for (const DataType type : {DataType::f32, DataType::f64}) {
      INFO(to_string(type));
      const HostResult h = run_host(*paneled, 40, type, config(Kernel::automatic, 0), quick_settings(), 21);
      CHECK(h.status == Status::passed);
      REQUIRE(h.check.has_value());
      CHECK(h.check->passed);
      REQUIRE(h.timed());
      CHECK(h.wall_ms.size() == 3);
      CHECK(h.bytes == 3.0 * 40 * 40 * double(element_size(type)));
      CHECK(h.gflops > 0.0);
      CHECK(h.copy_gbps > 0.0);
      CHECK(h.stats->median >= h.gpu_ms);
      CHECK(contains(h.ran, "panels of 16 rows") == cut);  // 40 rows: 3 panels where the pages import
    }
    Settings sampled = quick_settings();
    sampled.verify_max = 0.0;
    const HostResult s = run_host(test::engine(), 40, DataType::f32, config(Kernel::tiled, 8), sampled, 4);
    CHECK(s.status == Status::passed);
    REQUIRE(s.check.has_value());
    CHECK(s.check->sampled.has_value());
    // --host-sizes makes a host case per type and latency kernel, after the latency cases.
    SweepRequest request;
    request.sizes = "16", request.types = "f32,f64", request.kernels = "auto", request.latency_sizes = "none";
    request.host_sizes = "32,48";
    const SweepSpec spec = make_sweep(request, sweep_defaults(test::engine().device()));
    CHECK(spec.host_sizes == std::vector<uint32_t>{32, 48});
    const auto jobs = make_jobs(spec, quick_settings(), {});
    CHECK(std::count_if(jobs.begin(), jobs.end(), [](const Job& j) { return j.kind == JobKind::host; }) == 4);
    CHECK(jobs.back().kind == JobKind::host);
    request.host_sizes = "none";
    CHECK(make_sweep(request, sweep_defaults(test::engine().device())).host_sizes.empty());
  }

  TEST_CASE("above --verify-max a case gets the sampled check; --no-check times it unverified; efficiency needs a peak") {
    Settings s = quick_settings();
    s.verify_max = 40.0 * 40 * 40 - 1;
    s.peak_gflops = 1000.0;
    const CaseResult sampled = run_case(test::engine(), {40, 40, 40}, DataType::f32, config(Kernel::tiled, 16), s, 5);
    CHECK(sampled.status == Status::passed);
    REQUIRE(sampled.check.has_value());
    REQUIRE(sampled.check->sampled.has_value());
    CHECK(sampled.check->sampled->witnesses > 0);
    CHECK(sampled.check->sampled->seed == case_seed(5, 1));
    const CaseResult full = run_case(test::engine(), {39, 40, 40}, DataType::f32, config(Kernel::tiled, 16), s, 5);
    REQUIRE(full.check.has_value());
    CHECK_FALSE(full.check->sampled.has_value());
    s.check = false;
    const CaseResult r = run_case(test::engine(), {40, 40, 40}, DataType::f32, config(Kernel::tiled, 16), s, 5);
    CHECK(r.status == Status::unverified);
    CHECK_FALSE(r.check.has_value());
    REQUIRE(r.timed());
    REQUIRE(r.efficiency.has_value());
    CHECK(*r.efficiency == doctest::Approx(r.gflops / 1000.0));
    s.check = true;
    const CaseResult i = run_case(test::engine(), {8, 8, 8}, DataType::i32, config(Kernel::tiled, 16), s, 5);
    CHECK(i.status == Status::passed);
    CHECK_FALSE(i.efficiency.has_value());  // the peak is FP32's
  }

  TEST_CASE("what the device cannot run is skipped, with the limit named") {
    const auto& device = test::engine().device();
    uint32_t tile = 1;  // the first power of two whose square workgroup is too many invocations
    while (uint64_t{tile} * tile <= device.max_workgroup_invocations) tile *= 2;
    const CaseResult r =
        run_case(test::engine(), {64, 64, 64}, DataType::f32, config(Kernel::naive, tile), quick_settings(), 1);
    CHECK(r.status == Status::skipped);
    CHECK(contains(r.reason, "maxComputeWorkGroupInvocations"));
    CHECK_FALSE(r.timed());
    CHECK_FALSE(r.check.has_value());
  }

  TEST_CASE("end-to-end latency: verified, then one wall time per call") {
    const LatencyResult l =
        run_latency(test::engine(), 16, DataType::f32, config(Kernel::tiled, 16), quick_settings(), 9);
    CHECK(l.status == Status::passed);
    REQUIRE(l.check.has_value());
    CHECK(l.check->passed);
    REQUIRE(l.timed());
    CHECK(l.wall_us.size() == 4);
    CHECK(l.stats->min > 0.0);
    CHECK(l.warmup.dispatches == 0);  // a CPU device's default: none
  }

  TEST_CASE("end-to-end latency: warmed by time after the CPU check, as a throughput case") {
    Settings s = quick_settings();
    s.warmup_ms = 5.0;
    const LatencyResult l = run_latency(test::engine(), 16, DataType::f32, config(Kernel::tiled, 16), s, 9);
    REQUIRE(l.timed());
    CHECK(l.warmup.busy_ms >= 5.0);
    CHECK(l.warmup.dispatches > 0);
  }

  TEST_CASE("the sweep's pipelines built up front: its cases build none, and give what cases that build their own give") {
    // A small sweep of the default's make: f32 and i8 at two shapes, auto and every kernel (those the device
    // lacks are skipped cases; the emulated f32 product's passes and fallback among the rest), and latency.
    SweepRequest request;
    request.sizes = "24", request.shapes = "40x24x56", request.types = "f32,i8", request.tiles = "8";
    request.latency_sizes = "16";
    const SweepSpec spec = make_sweep(request, sweep_defaults(test::engine().device()));
    Settings settings = quick_settings();
    settings.seed = test::run_seed();
    std::vector<Job> jobs = make_jobs(spec, settings, {});
    // A latency case whose pipeline no throughput case uses (the default's latency sizes plan tiles of their
    // own on a GPU): tiled at tile 4.
    jobs.push_back({{16, 16, 16}, DataType::f32, config(Kernel::tiled, 4), JobKind::latency,
                    case_work({16, 16, 16}, settings, JobKind::latency)});
    MESSAGE("seed ", settings.seed, ", ", jobs.size(), " cases");
    // Without: each case builds its own pipelines as it first runs them.
    auto own = test::make_engine();
    const size_t own_before = pipelines_created(*own);
    const SweepOutcome unprepared = run_jobs(*own, jobs, settings);
    const size_t built_by_cases = pipelines_created(*own) - own_before;
    // With: all of them up front, on four threads at once; then the cases build none.
    auto engine = test::make_engine();
    const size_t before = pipelines_created(*engine);
    const Prebuilt built = prebuild(*engine, jobs, 4);
    CHECK(pipelines_created(*engine) - before == built.pipelines);
    CHECK(built.pipelines == built_by_cases);  // the same pipelines, each built once
    CHECK(built.pipelines >= 9);  // on lavapipe: naive, tiled and blocked, i8 and f32, the emulated passes
    CHECK(built.calls < jobs.size());  // the skipped cases (kernels this device lacks) are left out
    CHECK(prebuild(*engine, jobs, 4).pipelines == 0);
    const size_t prepared = pipelines_created(*engine);
    const SweepOutcome outcome = run_jobs(*engine, jobs, settings);
    CHECK(pipelines_created(*engine) == prepared);
    REQUIRE(outcome.status.size() == jobs.size());
    size_t ran = 0;
    for (size_t i = 0; i < jobs.size(); ++i) {
      INFO("case ", i, ": ", to_string(jobs[i].type), " ", to_string(jobs[i].config.options.kernel), " ",
           jobs[i].shape.m, "x", jobs[i].shape.n, "x", jobs[i].shape.k, jobs[i].kind == JobKind::latency ? " latency" : "");
      CHECK(outcome.status[i] == unprepared.status[i]);
      CHECK(outcome.ran[i] == unprepared.ran[i]);
      CHECK(outcome.c[i] == unprepared.c[i]);  // bit for bit: the same pipelines on the same inputs
      ran += outcome.status[i] == Status::passed;
    }
    CHECK(ran >= 20);
  }

  TEST_CASE("case seeds differ and repeat") {
    CHECK(case_seed(1, 0) != case_seed(1, 1));
    CHECK(case_seed(1, 0) != case_seed(2, 0));
    CHECK(case_seed(77, 5) == case_seed(77, 5));
  }
}
