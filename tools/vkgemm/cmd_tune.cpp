// vkgemm tune: searches the blocked kernel's configurations on this device, verifies each against the
// CPU reference before timing it, and writes the winners to the tuning file the engine loads at start.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "commands.hpp"
#include "random_fill.hpp"
#include "shapes.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {
namespace {

struct TuneOptions {
  std::string type = "f32";
  std::vector<std::string> sizes = {"1024", "2048", "4096", "8192", "4096x4096x1024", "8192x1024x8192",
                                    "1024x8192x8192", "127x4096x4096"};
  int64_t repeat = 20;
  bool quick = false;
  bool verbose = false;
  std::string out;
  std::optional<uint64_t> seed;
};

struct Timed {
  BlockedConfig config;
  double ms = 0.0;
};

class Tuner {
 public:
  Tuner(Engine& engine, DataType type, const Shape& s, uint64_t seed)
      : engine_(engine), type_(type), s_(s), bytes_c_(uint64_t{s.m} * s.n * element_size(type)) {
    std::mt19937_64 rng(seed);
    const auto a = random_matrix(type, uint64_t{s.m} * s.k, -1.0, 1.0, rng);
    const auto b = random_matrix(type, uint64_t{s.k} * s.n, -1.0, 1.0, rng);
    a_ = engine.create_buffer(a.size(), "tune A");
    b_ = engine.create_buffer(b.size(), "tune B");
    c_ = engine.create_buffer(bytes_c_, "tune C");
    engine.write(a_, 0, a.data(), a.size());
    engine.write(b_, 0, b.data(), b.size());
    reference_ = std::make_unique<ReferenceProduct>(type, s.m, s.n, s.k, a.data(), b.data());
    result_.resize(bytes_c_);
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

  // The median of `repeat` runs after at least `warmup` runs and 30 ms of warm-up work: a GPU that sat idle
  // while pipelines compiled runs at low clocks until kept busy for a while.
  double time(const BlockedConfig& config, uint32_t repeat, uint32_t warmup) {
    return time(blocked(config), repeat, warmup);
  }
  // ", 128 registers" where the driver reports the register count of the configuration's pipeline
  // (VK_KHR_pipeline_executable_properties), else "".
  std::string registers(const BlockedConfig& config) {
    if (!engine_.device().pipeline_statistics) return "";
    GemmDesc d;
    d.type = type_;
    d.m = s_.m, d.n = s_.n, d.k = s_.k;
    const auto n = engine_.pipeline_statistics(d, blocked(config)).registers();
    return n ? fmt::format(", {} registers", *n) : "";
  }

  double time(GemmOptions options, uint32_t repeat, uint32_t warmup) {
    options.repeat = 1;
    options.warmup = 0;
    const double once = run(options).median_gpu_ms();
    const auto busy = static_cast<uint32_t>(std::ceil(30.0 / std::max(once, 1e-3)));
    options.repeat = repeat;
    options.warmup = std::clamp(busy, warmup, 2000u);
    return run(options).median_gpu_ms();
  }

 private:
  static GemmOptions blocked(const BlockedConfig& config) { return {.kernel = Kernel::blocked, .blocked = config}; }
  GemmTiming run(const GemmOptions& options) {
    GemmTiming t = engine_.gemm({&a_, 0, s_.m, s_.k, type_}, {&b_, 0, s_.k, s_.n, type_},
                                {&c_, 0, s_.m, s_.n, type_}, options);
    if (t.kernel == Kernel::blocked) ran_ = parse_blocked_config(t.config);
    return t;
  }

  Engine& engine_;
  DataType type_;
  Shape s_;
  uint64_t bytes_c_;
  Buffer a_, b_, c_;
  std::unique_ptr<ReferenceProduct> reference_;
  std::vector<std::byte> result_;
  BlockedConfig ran_;

 public:
  // The blocked configuration the last run used, as the engine resolved it (an automatic split made concrete).
  const BlockedConfig& ran() const noexcept { return ran_; }
};

int tune(const TuneOptions& o, const CommonOptions& common) {
  const auto type = parse_data_type(o.type);
  if (type == DataType::f16) {
    throw Error(ErrorCode::invalid_argument, "--type f16: f16 is not tuned (auto takes coopmat2, coopmat or tiled for "
                                             "it); the blocked kernel is tuned for f32 or f64");
  }
  if (!type || *type == DataType::i32) {
    throw Error(ErrorCode::invalid_argument, fmt::format("--type {}: the blocked kernel is tuned for f32 or f64", o.type));
  }
  if (o.repeat < 3 || o.repeat > 1000) throw Error(ErrorCode::invalid_argument, "--repeat must be between 3 and 1000");
  const auto shapes = parse_shapes(o.sizes);
  Engine engine = open_engine(common);
  if (!engine.device().timestamps) {
    throw Error(ErrorCode::unsupported_config, fmt::format("{} has no timestamps: nothing to tune by", engine.device().name));
  }
  engine.check_supported(*type, {.kernel = Kernel::blocked});
  auto candidates = blocked_candidates(engine, *type);
  if (o.quick && candidates.size() > 24) {  // every fourth: a quick look, for slow devices
    std::vector<BlockedConfig> some;
    for (size_t i = 0; i < candidates.size(); i += 4) some.push_back(candidates[i]);
    candidates = std::move(some);
  }
  if (candidates.empty()) {
    throw Error(ErrorCode::unsupported_config, fmt::format("no blocked configuration fits {}", engine.device().name));
  }
  // The first stage's candidates: one warp layout (lanes 8 where it fits) per tile shape.
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
  const bool progress = isatty(STDERR_FILENO) != 0;
  const uint64_t seed = o.seed.value_or(fresh_seed());
  const std::string out = o.out.empty() ? default_tuning_file() : o.out;
  fmt::print("tuning the blocked kernel for {} on {} (driver {}): {} configurations ({} tile shapes), {} shapes, "
             "seed {}\n",
             o.type, engine.device().name, engine.device().driver_version, candidates.size(), first_stage.size(),
             shapes.size(), seed);

  std::vector<TuningEntry> entries;
  int failures = 0;
  const auto repeat = static_cast<uint32_t>(o.repeat);
  for (size_t si = 0; si < shapes.size(); ++si) {
    const Shape& s = shapes[si];
    const auto started = std::chrono::steady_clock::now();
    Tuner tuner(engine, *type, s, seed + si);
    std::vector<Timed> timed;
    size_t tried = 0;
    const auto try_candidate = [&](const BlockedConfig& c, uint32_t repeat_now, uint32_t warmup_now) {
      ++tried;
      if (progress) {
        fmt::print(stderr, "\r[{}/{}] {}x{}x{}: candidate {} ({})    ", si + 1, shapes.size(), s.m, s.n, s.k, tried,
                   to_string(c));
      }
      if (const auto why = tuner.verify(c)) {
        fmt::print(stderr, "\nFAILED verification: {} at {}x{}x{}: {}\n", to_string(c), s.m, s.n, s.k, *why);
        ++failures;
        return;
      }
      const double ms = tuner.time(c, repeat_now, warmup_now);
      timed.push_back({tuner.ran(), ms});
      if (o.verbose) {
        fmt::print("    candidate {:<50} {:9.3f} ms {:10.1f} GFLOP/s\n", to_string(tuner.ran()), ms,
                   2.0 * s.m * s.n * s.k / ms * 1e-6);
      }
    };
    // Stage 1: every tile shape with one warp layout, each with the split-K the engine would give it (none
    // where the output has blocks enough; for a short wide product such as 127x4096x4096 a tile shape timed
    // unsplit ranks far below where split-K puts it); stage 2: every warp layout of the five best.
    for (BlockedConfig c : first_stage) {
      c.split_k = 0;
      try_candidate(c, 4, 1);
    }
    std::sort(timed.begin(), timed.end(), [](const Timed& x, const Timed& y) { return x.ms < y.ms; });
    timed.resize(std::min<size_t>(timed.size(), o.quick ? 3 : 5));
    const std::vector<Timed> leaders = timed;
    for (const auto& leader : leaders) {
      for (BlockedConfig c : candidates) {
        c.split_k = leader.config.split_k;
        BlockedConfig same_tiles = c;
        same_tiles.lanes_n = leader.config.lanes_n;
        if (same_tiles == leader.config && c.lanes_n != leader.config.lanes_n) try_candidate(c, 4, 1);
      }
    }
    if (progress) fmt::print(stderr, "\r{:100}\r", "");
    if (timed.empty()) continue;
    std::sort(timed.begin(), timed.end(), [](const Timed& x, const Timed& y) { return x.ms < y.ms; });
    timed.resize(std::min<size_t>(timed.size(), o.quick ? 3 : 5));
    for (auto& t : timed) {  // the finalists, timed properly
      t.ms = tuner.time(t.config, repeat, 3);
      fmt::print("    finalist {:<50} {:9.3f} ms {:10.1f} GFLOP/s{}\n", to_string(t.config), t.ms,
                 2.0 * s.m * s.n * s.k / t.ms * 1e-6, tuner.registers(t.config));
    }
    // Split-K for outputs with few blocks: the finalists again, cut along K.
    const size_t finalists = timed.size();
    for (size_t i = 0; i < std::min<size_t>(finalists, 3); ++i) {
      const BlockedConfig base = timed[i].config;
      const uint64_t blocks = uint64_t{(s.m + base.bm - 1) / base.bm} * ((s.n + base.bn - 1) / base.bn);
      if (blocks >= 256) continue;
      for (uint32_t split : {1u, 2u, 4u, 8u, 16u}) {
        if (s.k / split < 256) break;
        if (split == base.split_k) continue;
        BlockedConfig c = base;
        c.split_k = split;
        try_candidate(c, repeat, 3);
      }
    }
    const auto fastest = [](const Timed& x, const Timed& y) { return x.ms < y.ms; };
    // The block order last: groups of block rows walked together, against the default plain row order.
    const BlockedConfig leader = std::min_element(timed.begin(), timed.end(), fastest)->config;
    for (uint32_t group : {4u, 8u, 16u}) {
      BlockedConfig c = leader;
      c.group_m = group;
      try_candidate(c, repeat, 3);
    }
    const auto best = *std::min_element(timed.begin(), timed.end(), fastest);
    TuningEntry entry{*type, s.m, s.n, s.k, Kernel::blocked, 0, best.config, 2.0 * s.m * s.n * s.k / best.ms * 1e-6};
    // The tiled kernel as the baseline: where it is faster, auto should take it.
    for (uint32_t tile : {16u, 32u}) {
      const GemmOptions tiled{.kernel = Kernel::tiled, .tile = tile};
      try {
        engine.check_supported(*type, tiled);
      } catch (const Error&) {
        continue;
      }
      if (const auto why = tuner.verify(tiled)) {
        fmt::print(stderr, "FAILED verification: tiled {} at {}x{}x{}: {}\n", tile, s.m, s.n, s.k, *why);
        ++failures;
        continue;
      }
      const double ms = tuner.time(tiled, repeat, 3);
      const double gflops = 2.0 * s.m * s.n * s.k / ms * 1e-6;
      if (gflops > entry.gflops) entry = {*type, s.m, s.n, s.k, Kernel::tiled, tile, {}, gflops};
    }
    entries.push_back(entry);
    const double gflops = entry.gflops;
    const double best_ms = 2.0 * s.m * s.n * s.k / gflops * 1e-6;
    const std::string winner = entry.kernel == Kernel::tiled
                                   ? fmt::format("tiled tile {}", entry.tile)
                                   : "blocked " + to_string(entry.config) + tuner.registers(entry.config);
    write_tuning_file(engine, {entries.back()}, out);  // shape by shape: an interrupted run keeps what it found
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    fmt::print("{:>6}x{:<6}x{:<6} {:<50} {:9.3f} ms {:10.1f} GFLOP/s   ({} verified, {:.0f} s)\n", s.m, s.n, s.k,
               winner, best_ms, gflops, tried, secs);
  }
  if (!entries.empty()) fmt::print("wrote {}\n", out);
  if (failures) fmt::print(stderr, "vkgemm tune: {} candidate(s) failed verification\n", failures);
  return finish(engine, failures ? 1 : 0);
}

}  // namespace

std::function<int()> add_tune_command(CLI::App& app, CommonOptions& common) {
  auto* cmd = app.add_subcommand("tune", "Search the blocked kernel's configurations on this device; verify each "
                                         "against the CPU reference, time it, and save the winners");
  auto o = std::make_shared<TuneOptions>();
  cmd->add_option("--type", o->type, "f32 or f64")->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "Shapes to tune: N (square) or MxNxK")->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "Timed runs of each finalist (the median counts)")->capture_default_str();
  cmd->add_flag("--quick", o->quick, "A quarter of the candidates and 3 finalists: for slow devices");
  cmd->add_flag("--verbose", o->verbose, "Print every candidate's time, not only the finalists'");
  cmd->add_option("--out", o->out, "Tuning file to update (default: VKGEMM_TUNING_FILE or ~/.config/vkgemm/tuning.json)");
  cmd->add_option("--seed", o->seed, "Seed for the random inputs (default: fresh, printed)");
  cmd->add_option("--device", common.device, "Device index or name substring (default: VKGEMM_DEVICE, then the best)");
  cmd->add_flag("--validate", common.validation, "Run under VK_LAYER_KHRONOS_validation; any message fails");
  return [o, &common] { return tune(*o, common); };
}

}  // namespace vkgemm::cli
