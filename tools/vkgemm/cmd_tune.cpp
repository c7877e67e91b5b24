// vkgemm tune: searches the blocked kernel's configurations on this device, verifies each against the
// CPU reference before timing it, and writes the winners to the tuning file the engine loads at start.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "commands.hpp"
#include "names.hpp"
#include "option_checks.hpp"
#include "random_fill.hpp"
#include "shapes.hpp"
#include "steady.hpp"
#include "time_in_turns.hpp"
#include "tune_progress.hpp"
#include "bench/bench_progress.hpp"
#include "tune_jobs.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {
namespace {

struct TuneOptions {
  DataType type = DataType::f32;
  std::vector<std::string> sizes = {"1024", "2048", "4096", "8192", "4096x4096x1024", "8192x1024x8192",
                                    "1024x8192x8192", "127x4096x4096"};
  std::vector<std::string> ops = {"nn"};
  std::string shape_set;  // --shapes: a shape-set file instead of --sizes and --ops
  int64_t repeat = 20;
  double warmup_ms = -1.0;  // < 0: the device's default (steady.hpp)
  bool quick = false;
  bool verbose = false;
  std::string out;
};

struct Timed {
  BlockedConfig config;
  double ms = 0.0;
};

// A rows x cols row-major matrix of `bytes_per_element` elements, stored transposed (cols x rows).
std::vector<std::byte> transposed(const std::vector<std::byte>& x, uint64_t rows, uint64_t cols, size_t bytes) {
  std::vector<std::byte> out(x.size());
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c) std::copy_n(&x[(r * cols + c) * bytes], bytes, &out[(c * rows + r) * bytes]);
  return out;
}

class Tuner {
 public:
  // The row-major product op(A) (m x k) op(B) (k x n) of `job`: the reference from op(A) and op(B), the
  // device buffers holding A and B as the ops say they are stored.
  Tuner(Engine& engine, DataType type, const TuneJob& job, uint64_t seed, double warmup_ms)
      : engine_(engine), s_(job.shape), bytes_c_(uint64_t{s_.m} * s_.n * element_size(type)),
        warmup_ms_(warmup_ms) {
    std::mt19937_64 rng(seed);
    const auto a = random_matrix(type, uint64_t{s_.m} * s_.k, -1.0, 1.0, rng);
    const auto b = random_matrix(type, uint64_t{s_.k} * s_.n, -1.0, 1.0, rng);
    const size_t es = element_size(type);
    const auto stored_a = job.op_a == Op::t ? transposed(a, s_.m, s_.k, es) : a;
    const auto stored_b = job.op_b == Op::t ? transposed(b, s_.k, s_.n, es) : b;
    a_ = engine.create_buffer(a.size(), "tune A");
    b_ = engine.create_buffer(b.size(), "tune B");
    c_ = engine.create_buffer(bytes_c_, "tune C");
    engine.write(a_, 0, stored_a.data(), stored_a.size());
    engine.write(b_, 0, stored_b.data(), stored_b.size());
    reference_ = std::make_unique<ReferenceProduct>(type, s_.m, s_.n, s_.k, a.data(), b.data());
    result_.resize(bytes_c_);
    desc_.type = type;
    desc_.op_a = job.op_a, desc_.op_b = job.op_b;
    desc_.m = s_.m, desc_.n = s_.n, desc_.k = s_.k;
  }

  // One run on a poisoned C, compared with the reference; the reason when it fails.
  std::optional<std::string> verify(const BlockedConfig& config) { return verify(blocked(config)); }
  std::optional<std::string> verify(GemmOptions options) {
    engine_.fill(c_, 0, bytes_c_, 0xFFFFFFFFu);  // NaN: an element the candidate does not write fails
    options.repeat = 1;
    options.warmup = 0;
    run(options);
    engine_.read(c_, 0, result_.data(), bytes_c_);
    const Comparison cmp = reference_->compare(result_.data());
    if (cmp.passed) return std::nullopt;
    return cmp.summary();
  }

  // The median of `repeat` runs after the shared warm-up (steady.hpp) and `warmup` more runs: a GPU that sat
  // idle while pipelines compiled (or while the CPU verified the last candidate) runs at low clocks until
  // kept busy for a while.
  double time(const BlockedConfig& config, uint32_t repeat, uint32_t warmup) {
    return time(blocked(config), repeat, warmup);
  }
  // Builds the pipelines of `configs` for this product on every hardware thread (Engine::prepare): one at a
  // time, a fresh GPU machine spends minutes compiling before its first product is timed
  // (docs/tuning.md).
  void prepare(const std::vector<BlockedConfig>& configs) {
    std::vector<GemmOptions> options;
    for (const auto& c : configs) options.push_back(blocked(c));
    engine_.prepare(desc_, options);
  }
  // The blocked configuration auto runs for this product today (its plan, as the engine resolves it), or
  // nothing where auto runs another kernel.
  std::optional<BlockedConfig> auto_choice() {
    const GemmTiming t = run({.kernel = Kernel::automatic, .repeat = 1, .warmup = 0});
    if (t.kernel != Kernel::blocked) return std::nullopt;
    return ran_;
  }
  // ", 128 registers" where the driver reports the register count of the configuration's pipeline
  // (VK_KHR_pipeline_executable_properties), else "".
  std::string registers(const BlockedConfig& config) {
    if (!engine_.device().pipeline_statistics) return "";
    const auto n = engine_.pipeline_statistics(desc_, blocked(config)).registers();
    return n ? fmt::format(", {} registers", *n) : "";
  }

  double time(GemmOptions options, uint32_t repeat, uint32_t warmup) {
    const WarmUp w = warm_up(warmup_ms_, [&](uint32_t n) {
      options.repeat = n, options.warmup = 0;
      const GemmTiming t = run(options);
      double ms = 0.0;
      for (const double x : t.gpu_ms) ms += x;
      return ms;
    });
    options.repeat = repeat;
    options.warmup = warmup + w.last_batch;
    return run(options).median_gpu_ms();
  }

 private:
  static GemmOptions blocked(const BlockedConfig& config) { return {.kernel = Kernel::blocked, .blocked = config}; }
  GemmTiming run(const GemmOptions& options) {
    GemmTiming t = engine_.gemm(desc_, {&a_, 0}, {&b_, 0}, {&c_, 0}, options);
    if (t.kernel == Kernel::blocked) ran_ = parse_blocked_config(t.config);
    return t;
  }

  Engine& engine_;
  Shape s_;
  uint64_t bytes_c_;
  double warmup_ms_;
  Buffer a_, b_, c_;
  std::unique_ptr<ReferenceProduct> reference_;
  std::vector<std::byte> result_;
  GemmDesc desc_;
  BlockedConfig ran_;

 public:
  // The blocked configuration the last run used, as the engine resolved it (an automatic split made concrete).
  const BlockedConfig& ran() const noexcept { return ran_; }
};

// The options, checked once when the command line is parsed.
void check_options(const TuneOptions& o) {
  if (o.type == DataType::f16) {
    throw Error(ErrorCode::invalid_argument, "--type f16: f16 is not tuned (auto takes coopmat2, coopmat or tiled for "
                                             "it); the blocked kernel is tuned for f32 or f64");
  }
  if (o.type != DataType::f32 && o.type != DataType::f64) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--type {}: the blocked kernel is tuned for f32 or f64", to_string(o.type)));
  }
  if (o.repeat < 3 || o.repeat > 1000) throw Error(ErrorCode::invalid_argument, "--repeat must be between 3 and 1000");
  (void)parse_shapes(o.sizes);
  (void)parse_ops(o.ops);
}

// The blocked configurations this device can run (every fourth with --quick: a quick look, for slow devices).
std::vector<BlockedConfig> candidate_configs(Engine& engine, DataType type, bool quick) {
  auto candidates = blocked_candidates(engine, type);
  if (quick && candidates.size() > 24) {
    std::vector<BlockedConfig> some;
    for (size_t i = 0; i < candidates.size(); i += 4) some.push_back(candidates[i]);
    candidates = std::move(some);
  }
  if (candidates.empty()) {
    throw Error(ErrorCode::unsupported_config, fmt::format("no blocked configuration fits {}", engine.device().name));
  }
  return candidates;
}

// The first stage's candidates: one warp layout (lanes 8 where it fits) per tile shape.
std::vector<BlockedConfig> one_per_tile_shape(const std::vector<BlockedConfig>& candidates) {
  std::vector<BlockedConfig> first_stage;
  for (const auto& c : candidates) {
    const auto same_tiles = [&](const BlockedConfig& d) {
      return d.bm == c.bm && d.bn == c.bn && d.bk == c.bk && d.tm == c.tm && d.tn == c.tn;
    };
    auto it = std::find_if(first_stage.begin(), first_stage.end(), same_tiles);
    if (it == first_stage.end()) {
      first_stage.push_back(c);
    } else if (c.lanes_n == 8) {
      *it = c;
    }
  }
  return first_stage;
}

bool faster(const Timed& x, const Timed& y) { return x.ms < y.ms; }

// The configurations to search: all of them, and stage 1's (one warp layout per tile shape).
struct Candidates {
  std::vector<BlockedConfig> all, first_stage;
};

// The search for one shape: candidates verified, then timed; the winner as a tuning entry.
class ShapeSearch {
 public:
  ShapeSearch(Engine& engine, const TuneOptions& o, const TuneJob& job, uint64_t seed, std::string where,
              TuneProgress& progress)
      : engine_(engine), o_(o), job_(job), s_(job.shape),
        tuner_(engine, o.type, job, seed, default_warmup_ms(engine.device(), o.warmup_ms)), where_(std::move(where)),
        progress_(progress) {}

  TuningEntry run(const Candidates& candidates);
  size_t tried() const { return tried_; }
  // What auto's own choice read in the last round (0: auto runs another kernel here).
  double auto_gflops() const { return auto_ms_ > 0.0 ? gflops(auto_ms_) : 0.0; }
  int failures() const { return failures_; }
  std::string registers(const BlockedConfig& config) { return tuner_.registers(config); }
  bool empty() const { return timed_.empty(); }

 private:
  double gflops(double ms) const { return 2.0 * s_.m * s_.n * s_.k / ms * 1e-6; }
  void keep_best(size_t count) {
    std::sort(timed_.begin(), timed_.end(), faster);
    timed_.resize(std::min(timed_.size(), count));
  }
  void try_candidate(const BlockedConfig& c, uint32_t repeat, uint32_t warmup);
  void warp_layouts_of_leaders(const std::vector<BlockedConfig>& candidates);
  void time_finalists();
  void split_k_of_finalists();
  void block_orders();
  void final_round();
  TuningEntry tiled_baseline(TuningEntry entry);

  TuningEntry entry(Kernel kernel, uint32_t tile, const BlockedConfig& config, double ms) const {
    return {o_.type, s_.m, s_.n, s_.k, job_.op_a, job_.op_b, kernel, tile, config, gflops(ms)};
  }

  Engine& engine_;
  const TuneOptions& o_;
  TuneJob job_;
  Shape s_;
  Tuner tuner_;
  std::string where_;  // "[1/8] 1024x1024x1024", for the progress line
  std::vector<Timed> timed_;
  double auto_ms_ = 0.0;
  size_t tried_ = 0;
  int failures_ = 0;
  TuneProgress& progress_;
};

void ShapeSearch::try_candidate(const BlockedConfig& c, uint32_t repeat, uint32_t warmup) {
  ++tried_;
  progress_.candidate(where_, to_string(c));
  if (const auto why = tuner_.verify(c)) {
    fmt::print(stderr, "\nFAILED verification: {} at {}x{}x{}: {}\n", to_string(c), s_.m, s_.n, s_.k, *why);
    ++failures_;
    return;
  }
  const double ms = tuner_.time(c, repeat, warmup);
  timed_.push_back({tuner_.ran(), ms});
  if (o_.verbose) fmt::print("    candidate {:<50} {:9.3f} ms {:10.1f} GFLOP/s\n", to_string(tuner_.ran()), ms, gflops(ms));
}

// Stage 2: every warp layout of the leaders of stage 1, with the leader's split.
void ShapeSearch::warp_layouts_of_leaders(const std::vector<BlockedConfig>& candidates) {
  std::vector<BlockedConfig> layouts;
  for (const auto& leader : timed_) {
    for (BlockedConfig c : candidates) {
      c.split_k = leader.config.split_k;
      BlockedConfig same_tiles = c;
      same_tiles.lanes_n = leader.config.lanes_n;
      if (same_tiles == leader.config && c.lanes_n != leader.config.lanes_n) layouts.push_back(c);
    }
  }
  progress_.stage(fmt::format("{}: building {} pipelines (warp layouts of the leaders)", where_, layouts.size()));
  tuner_.prepare(layouts);
  for (const auto& c : layouts) try_candidate(c, 4, 1);
}

void ShapeSearch::time_finalists() {
  for (auto& t : timed_) {
    t.ms = tuner_.time(t.config, static_cast<uint32_t>(o_.repeat), 3);
    fmt::print("    finalist {:<50} {:9.3f} ms {:10.1f} GFLOP/s{}\n", to_string(t.config), t.ms, gflops(t.ms),
               tuner_.registers(t.config));
  }
}

// Split-K for outputs with few blocks: the finalists again, cut along K.
void ShapeSearch::split_k_of_finalists() {
  const size_t finalists = timed_.size();
  for (size_t i = 0; i < std::min<size_t>(finalists, 3); ++i) {
    const BlockedConfig base = timed_[i].config;
    const uint64_t blocks = uint64_t{(s_.m + base.bm - 1) / base.bm} * ((s_.n + base.bn - 1) / base.bn);
    if (blocks >= 256) continue;
    for (uint32_t split : {1u, 2u, 4u, 8u, 16u}) {
      if (s_.k / split < kMinBlockedSliceK) break;
      if (split == base.split_k) continue;
      BlockedConfig c = base;
      c.split_k = split;
      try_candidate(c, static_cast<uint32_t>(o_.repeat), 3);
    }
  }
}

// The block order last: groups of block rows walked together, against the default plain row order.
void ShapeSearch::block_orders() {
  const BlockedConfig leader = std::min_element(timed_.begin(), timed_.end(), faster)->config;
  for (uint32_t group : {4u, 8u, 16u}) {
    BlockedConfig c = leader;
    c.group_m = group;
    try_candidate(c, static_cast<uint32_t>(o_.repeat), 3);
  }
}

// The last word: the three fastest so far and the configuration auto runs for this product today, timed
// again in turns (time_in_turns: four rounds, each timing warmed as every timing is). A ranking read in one
// pass drifts with the GPU's clock -- sub-millisecond finalists can read several times slower than the same
// configurations a few seconds later (docs/tuning.md) -- and no entry should be slower than what auto runs.
void ShapeSearch::final_round() {
  keep_best(3);
  const std::optional<BlockedConfig> incumbent = tuner_.auto_choice();
  size_t auto_at = timed_.size();
  if (incumbent) {
    const auto same = [&](const Timed& t) { return t.config == *incumbent; };
    auto_at = static_cast<size_t>(std::find_if(timed_.begin(), timed_.end(), same) - timed_.begin());
    if (auto_at == timed_.size()) {
      if (const auto why = tuner_.verify(*incumbent)) {
        fmt::print(stderr, "FAILED verification: auto's {} at {}x{}x{}: {}\n", to_string(*incumbent), s_.m, s_.n, s_.k,
                   *why);
        ++failures_;
      } else {
        timed_.push_back({*incumbent, 0.0});
      }
    }
  }
  const auto repeat = static_cast<uint32_t>(o_.repeat);
  const auto ms = time_in_turns(timed_.size(), 4, [&](size_t i) { return tuner_.time(timed_[i].config, repeat, 3); });
  for (size_t i = 0; i < timed_.size(); ++i) {
    timed_[i].ms = ms[i];
    if (i == auto_at) auto_ms_ = ms[i];
    fmt::print("    in turns {:<50} {:9.3f} ms {:10.1f} GFLOP/s{}\n", to_string(timed_[i].config), ms[i], gflops(ms[i]),
               i == auto_at ? "  (auto's choice today)" : "");
  }
}

// The tiled kernel as the baseline: where it is faster, auto should take it.
TuningEntry ShapeSearch::tiled_baseline(TuningEntry entry) {
  for (uint32_t tile : {16u, 32u}) {
    const GemmOptions tiled{.kernel = Kernel::tiled, .tile = tile};
    try {
      engine_.check_supported(o_.type, tiled);
    } catch (const Error&) {
      continue;
    }
    if (const auto why = tuner_.verify(tiled)) {
      fmt::print(stderr, "FAILED verification: tiled {} at {}x{}x{}: {}\n", tile, s_.m, s_.n, s_.k, *why);
      ++failures_;
      continue;
    }
    const double ms = tuner_.time(tiled, static_cast<uint32_t>(o_.repeat), 3);
    if (gflops(ms) > entry.gflops) entry = this->entry(Kernel::tiled, tile, {}, ms);
  }
  return entry;
}

// Stage 1: every tile shape with one warp layout, each with the split-K the engine would give it (none where
// the output has blocks enough; for a short wide product such as 127x4096x4096 a tile shape timed unsplit
// ranks far below where split-K puts it); stage 2: every warp layout of the five best; then the finalists
// timed properly, split along K, and grouped; last, the three best and auto's own choice timed in turns.
// Call only when !empty() after it.
TuningEntry ShapeSearch::run(const Candidates& candidates) {
  const size_t keep = o_.quick ? 3 : 5;
  std::vector<BlockedConfig> first_stage = candidates.first_stage;
  for (BlockedConfig& c : first_stage) c.split_k = 0;
  progress_.stage(fmt::format("{}: building {} pipelines", where_, first_stage.size()));
  tuner_.prepare(first_stage);
  for (const BlockedConfig& c : first_stage) try_candidate(c, 4, 1);
  keep_best(keep);
  warp_layouts_of_leaders(candidates.all);
  progress_.clear();
  if (timed_.empty()) return {};
  keep_best(keep);
  time_finalists();
  split_k_of_finalists();
  block_orders();
  final_round();
  const auto best = *std::min_element(timed_.begin(), timed_.end(), faster);
  return tiled_baseline(entry(Kernel::blocked, 0, best.config, best.ms));
}

// The products to tune: a shape set's cases, else every --sizes shape with every --ops combination.
std::vector<TuneJob> tune_jobs(const TuneOptions& o) {
  if (o.shape_set.empty()) return jobs_of(parse_shapes(o.sizes), parse_ops(o.ops));
  size_t batched = 0;
  auto jobs = jobs_from_shape_set(o.shape_set, o.type, batched);
  if (batched) fmt::print("{}: {} batched case(s) left out (an entry is for one product)\n", o.shape_set, batched);
  return jobs;
}

// One product searched, its entry written to `out` at once (an interrupted run keeps what it found).
int tune_one(Engine& engine, const TuneOptions& o, const Candidates& c, const TuneJob& job, uint64_t seed,
             const std::string& where, const std::string& out, TuneProgress& progress) {
  const auto started = std::chrono::steady_clock::now();
  ShapeSearch search(engine, o, job, seed, where, progress);
  const TuningEntry entry = search.run(c);
  if (search.empty()) return search.failures();
  const Shape& s = job.shape;
  const double best_ms = 2.0 * s.m * s.n * s.k / entry.gflops * 1e-6;
  const std::string winner = entry.kernel == Kernel::tiled
                                 ? fmt::format("tiled tile {}", entry.tile)
                                 : "blocked " + to_string(entry.config) + search.registers(entry.config);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string against =
      search.auto_gflops() > 0.0 ? fmt::format(", auto's choice {:.1f}", search.auto_gflops()) : std::string();
  fmt::print("{:<24} {:<50} {:9.3f} ms {:10.1f} GFLOP/s   ({} verified{}, {:.0f} s)\n", to_string(job), winner, best_ms,
             entry.gflops, search.tried(), against, secs);
  std::fflush(stdout);  // a run cut short (a time limit, a failed write) still shows every winner it found
  write_tuning_file(engine, {entry}, out);
  return search.failures();
}

// Before the search: about how long it takes, from the number of timings it plans and the rate the device
// timed the calibration product at (each timing about kProductsPerTiming products after its warm-up, and
// the host's part).
void print_estimate(const DeviceInfo& device, const std::vector<TuneJob>& jobs, size_t per_product,
                    double calibration_ms, double warmup_ms) {
  constexpr double kProductsPerTiming = 8.0;
  constexpr double kHostMsPerTiming = 3.0;  // a submission, a readback and the CPU check, at least
  const double n = calibration_size(device);
  const double flops_per_ms = 2.0 * n * n * n / std::max(calibration_ms, 1e-6);
  double seconds = 0.0;
  for (const TuneJob& job : jobs) {
    const double product_ms = 2.0 * job.shape.m * job.shape.n * job.shape.k / flops_per_ms;
    seconds += double(per_product) * (kProductsPerTiming * product_ms + warmup_ms + kHostMsPerTiming) * 1e-3;
  }
  fmt::print("estimate: about {} candidate timings for {} product(s) at {:.1f} GFLOP/s (the calibration product's "
             "rate): about {}, plus building the pipelines (most of the time on a CPU device)\n",
             per_product * jobs.size(), jobs.size(), flops_per_ms * 1e-6,
             bench::Progress::duration_text(std::max(seconds, 1.0)));
  std::fflush(stdout);
}

int tune(const TuneOptions& o, const CommonOptions& common) {
  const std::vector<TuneJob> jobs = tune_jobs(o);
  const std::string out = o.out.empty() ? default_tuning_file() : o.out;
  check_tuning_file(out);  // an unwritable or corrupt file is an error now, not after the search
  Engine engine = open_engine(common);
  if (!engine.device().timestamps) {
    throw Error(ErrorCode::unsupported_config, fmt::format("{} has no timestamps: nothing to tune by", engine.device().name));
  }
  engine.check_supported(o.type, {.kernel = Kernel::blocked});
  Candidates candidates;
  candidates.all = candidate_configs(engine, o.type, o.quick);
  candidates.first_stage = one_per_tile_shape(candidates.all);
  const uint64_t seed = common.seed.value_or(fresh_seed());
  fmt::print("tuning the blocked kernel for {} on {} (driver {}): {} configurations ({} tile shapes), {} products, "
             "seed {}; each winner written to {} as it is found\n",
             to_string(o.type), engine.device().name, engine.device().driver_version, candidates.all.size(),
             candidates.first_stage.size(), jobs.size(), seed, out);
  std::fflush(stdout);
  // The shared steadiness rule (steady.hpp): a check before the first product and after each one.
  const double warmup_ms = default_warmup_ms(engine.device(), o.warmup_ms);
  SteadyCheck steady(engine, warmup_ms, kSteadyTolerancePct);
  steady.check();
  const size_t per_product = planned_timings(candidates.all.size(), candidates.first_stage.size(), o.quick ? 3 : 5);
  print_estimate(engine.device(), jobs, per_product, steady.checks().front().median_ms, warmup_ms);
  TuneProgress progress(per_product * jobs.size(), isatty(STDERR_FILENO) != 0);
  int failures = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    failures += tune_one(engine, o, candidates, jobs[i], seed + i,
                         fmt::format("[{}/{}] {}", i + 1, jobs.size(), to_string(jobs[i])), out, progress);
    steady.check();
  }
  fmt::print("steadiness: {}", steady.summary([&](size_t i) { return to_string(jobs[i]); }));
  if (failures) fmt::print(stderr, "vkgemm tune: {} candidate(s) failed verification\n", failures);
  return finish(engine, failures ? 1 : 0);
}

}  // namespace

Command add_tune_command(CLI::App& cmd, CommonOptions& common) {
  auto o = std::make_shared<TuneOptions>();
  add_enum_option(cmd, "--type", o->type, type_table(), "f32 or f64")->default_str(std::string(to_string(o->type)));
  auto* sizes = cmd.add_option("--sizes", o->sizes, "Shapes to tune: N (square) or MxNxK")
                    ->capture_default_str()
                    ->check(non_empty_list());
  auto* ops = cmd.add_option("--ops", o->ops, "Op combinations of each shape, comma-separated: nn, nt, tn, tt (op(A) then "
                                  "op(B); t: stored transposed), or all")
                  ->capture_default_str()
                  ->check(non_empty_list());
  cmd.add_option("--shapes", o->shape_set, "A shape-set file (tools/shape-sets/*.json): tune its cases of --type "
                                           "(with their ops; column-major ones as the kernel runs them) instead of "
                                           "--sizes and --ops")->check(CLI::ExistingFile)->excludes(sizes)->excludes(ops);
  cmd.add_option("--repeat", o->repeat, "Timed runs of each finalist (the median counts)")->capture_default_str();
  cmd.add_option("--warmup-ms", o->warmup_ms,
                 fmt::format("Before each timing, untimed products until the device has been busy this long and "
                             "runs them at a settled speed (an idle GPU clocks down); 0: none [default: {:g} on a "
                             "GPU, 0 on a CPU device]",
                             kGpuWarmupMs))
      ->check(number_between(0.0, 10000.0));
  cmd.add_flag("--quick", o->quick, "A quarter of the candidates and 3 finalists: for slow devices");
  cmd.add_flag("--verbose", o->verbose, "Print every candidate's time, not only the finalists'");
  cmd.add_option("--out", o->out, "Tuning file to update (default: VKGEMM_TUNING_FILE or ~/.config/vkgemm/tuning.json)");
  return {[o] { check_options(*o); }, [o, &common] { return tune(*o, common); }};
}

}  // namespace vkgemm::cli
