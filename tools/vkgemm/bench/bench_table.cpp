#include "bench_table.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bench_steady.hpp"

namespace vkgemm::cli::bench {
namespace {

std::string shape_text(const Shape& s) { return fmt::format("{}x{}x{}", s.m, s.n, s.k); }

// What the check said, in a few characters: the normwise error, "exact" for integers, or why there was none.
std::string check_text(const std::optional<Comparison>& c, DataType type, Status status) {
  if (!c) return status == Status::unverified ? "unverified (--no-check)" : "";
  if (!c->passed) return "FAILED";
  const std::string how = c->sampled ? " sampled" : "";
  return (is_integer(type) ? "exact" : fmt::format("{:.2e}", c->normwise_error)) + how;
}

// The configuration that ran, where the label does not already say it (auto, "default").
std::string ran_text(const BenchConfig& config, const std::string& ran) {
  const std::string labelled = fmt::format("{} {}", to_string(config.options.kernel), config.label);
  return ran.empty() || ran == labelled ? "" : "  ran: " + ran;
}

// The pairs the device never runs, one line per kernel: its types and the first refusal's words.
std::string not_applicable_text(const std::vector<NotApplicable>& never) {
  std::string out;
  for (size_t i = 0; i < never.size(); ++i) {
    bool first = true;
    for (size_t j = 0; j < i; ++j) first = first && never[j].kernel != never[i].kernel;
    if (!first) continue;
    std::string types;
    for (const NotApplicable& n : never) {
      if (n.kernel == never[i].kernel) types += fmt::format("{}{}", types.empty() ? "" : ", ", to_string(n.type));
    }
    out += fmt::format("{:<10}{} with {}: {}\n", i == 0 ? "not run:" : "", to_string(never[i].kernel), types,
                       never[i].reason);
  }
  return out;
}

}  // namespace

std::string run_header(const Run& run) {
  const auto& d = run.device;
  const auto& s = run.settings;
  std::string out;
  out += fmt::format("device:   {} ({}, {})\n", d.name, d.vendor, to_string(d.type));
  out += fmt::format("driver:   {} {} ({}), Vulkan {}\n", d.driver_name, d.driver_version, d.driver_info,
                     d.api_version);
  out += fmt::format("vkgemm:   {} (commit {}), {}\n", run.vkgemm_version, run.vkgemm_commit, run.date);
  const std::string checks = s.check ? fmt::format("the full CPU reference up to m*n*k = {:.0f}, the sampled check "
                                                   "above", s.verify_max)
                                     : std::string("no checks (--no-check)");
  out += fmt::format("settings: {} timed dispatches per case after {:g} ms of warm-up and {} more; {}; {} latency "
                     "calls; seed {}\n",
                     s.repeat, s.warmup_ms, s.warmup, checks, s.latency_calls, s.seed);
  if (s.baseline_max > 0.0) {
    out += fmt::format("          naive and tiled up to m*n*k = {:.0f} (the default sweep; --sizes times them at "
                       "every size)\n", s.baseline_max);
  }
  out += not_applicable_text(run.not_applicable);
  if (s.peak_gflops) out += fmt::format("peak:     {:.1f} GFLOP/s FP32, as given by --peak-gflops\n", *s.peak_gflops);
  if (!s.ceilings.empty()) {
    std::string list;
    for (const Ceiling& c : s.ceilings) list += fmt::format("{}{} {:.1f}", list.empty() ? "" : ", ", c.name, c.gflops);
    out += fmt::format("peak:     measured by vkgemm peak, GFLOP/s: {}\n          eff: f32 against f32 FMA; f64 "
                       "against f64 FMA; f16 against the fastest MMA shape of its sum type on coopmat and "
                       "coopmat2, else the FMA of its sum type\n", list);
  }
  if (s.copy_gbps) {
    out += fmt::format("roofline: each case's ceiling is the lesser of eff's and its bytes (A, B read once, C written "
                       "once) at the copy rate, {:.0f} GB/s; roof: the fraction of it reached, m where the memory "
                       "bounds it\n", *s.copy_gbps);
  }
  return out;
}

std::string case_table_header() {
  return fmt::format("\n{:<20} {:<4} {:<7} {:<9} {:<10} {:>11} {:>11} {:>11} {:>7} {:>10} {:>6} {:>7}  {}\n",
                     "m x n x k", "type", "kernel", "config", "status", "median ms", "min ms", "max ms", "spread",
                     "GFLOP/s", "eff", "roof", "check (normwise error)");
}

namespace {
// The fraction of the case's roofline reached, "m" where the memory bounds it: "91.2%m", "54.0%"; "-" without one.
std::string roof_text(const CaseResult& c) {
  if (!c.roofline || !c.roofline_fraction) return "-";
  return fmt::format("{:.1f}%{}", *c.roofline_fraction * 100.0, c.roofline->memory_bound ? "m" : "");
}
}  // namespace

std::string case_row(const CaseResult& c) {
  const std::string head = fmt::format("{:<20} {:<4} {:<7} {:<9} {:<10}", shape_text(c.shape), to_string(c.type),
                                       to_string(c.config.options.kernel), c.config.label, to_string(c.status));
  if (!c.timed()) {
    return fmt::format("{} {}{}\n", head, c.status == Status::failed ? "FAILED, not timed: " : "", c.reason);
  }
  const Stats& s = *c.stats;
  const std::string eff = c.efficiency ? fmt::format("{:.1f}%", *c.efficiency * 100.0) : "-";
  return fmt::format("{} {:>11.4f} {:>11.4f} {:>11.4f} {:>6.1f}% {:>10.2f} {:>6} {:>7}  {}{}\n", head, s.median, s.min,
                     s.max, s.spread_pct, c.gflops, eff, roof_text(c), check_text(c.check, c.type, c.status),
                     ran_text(c.config, c.ran));
}

namespace {
// The head of an n x n x n case's row (latency, host memory): size, type, kernel, configuration, status; and
// the whole row of one not timed (skipped, or failed: its reason).
template <typename Result>
std::string square_head(const Result& r) {
  return fmt::format("{:<12} {:<4} {:<7} {:<9} {:<8}", fmt::format("{0}x{0}x{0}", r.size), to_string(r.type),
                     to_string(r.config.options.kernel), r.config.label, to_string(r.status));
}
template <typename Result>
std::string untimed_row(const Result& r) {
  return fmt::format("{} {}{}\n", square_head(r), r.status == Status::failed ? "FAILED, not timed: " : "", r.reason);
}
}  // namespace

std::string latency_table_header() {
  return fmt::format("\nend-to-end latency: host wall time of one Engine::gemm on device buffers without timestamps "
                     "(the same buffers each call: its recording submitted again); on alternating C buffers (rerec, "
                     "recorded each call); with timestamps (gemm+ts) and their GPU time; GemmPlan::record alone; a "
                     "plan's Engine::submit and its wait, one at a time; Engine::run of it with timestamps (plan+ts); "
                     "per product with many in flight\n"
                     "{:<12} {:<4} {:<7} {:<9} {:<8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  "
                     "{}\n",
                     "n x n x n", "type", "kernel", "config", "status", "median us", "min us", "max us", "rerec us",
                     "gemm+ts", "gpu us", "record us", "submit us", "wait us", "plan+ts", "flight us", "check");
}

std::string latency_row(const LatencyResult& l) {
  if (!l.timed()) return untimed_row(l);
  const Stats& s = *l.stats;
  return fmt::format(
      "{} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.2f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f}  {}{}\n",
      square_head(l), s.median, s.min, s.max, l.rerecord_us, l.timed_sync_us, l.gpu_us, l.record_us, l.plan_submit_us,
      l.plan_wait_us, l.timed_plan_us, l.inflight_us, check_text(l.check, l.type, l.status), ran_text(l.config, l.ran));
}

std::string host_table_header() {
  return fmt::format("\nhost-memory products: Engine::gemm on host pointers (A and B copied in, C out, with the product), "
                     "host wall time of each call; of the median call its GPU time, the time before its first product "
                     "and after its last; the copies' rate as the caller pays it, bytes / (wall - GPU): above the "
                     "bus's own (vkgemm peak's host rows) where copies ran beside the product\n"
                     "{:<12} {:<4} {:<7} {:<9} {:<8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9}  {}\n",
                     "n x n x n", "type", "kernel", "config", "status", "median ms", "min ms", "max ms", "gpu ms",
                     "before ms", "after ms", "GB/s", "GFLOP/s", "check");
}

std::string host_row(const HostResult& h) {
  if (!h.timed()) return untimed_row(h);
  const Stats& s = *h.stats;
  return fmt::format("{} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>8.2f} {:>9.1f}  {}{}\n",
                     square_head(h), s.median, s.min, s.max, h.gpu_ms, h.upload_ms, h.download_ms, h.copy_gbps,
                     h.gflops,
                     check_text(h.check, h.type, h.status), ran_text(h.config, h.ran));
}

// The steadiness checks in a line: how many, the calibration product's fastest and slowest reading, the verdict.
std::string steadiness_line(const Run& run) {
  const auto& checks = run.steadiness.checks;
  if (checks.empty()) return "";
  const size_t unsteady = unsteady_count(run), unsettled = unsettled_count(run);
  const std::string warm_note =
      unsettled ? fmt::format("; {} cases still sped up at the end of their warm-up (a longer --warmup-ms)", unsettled)
                : std::string();
  return fmt::format("steadiness: {}: {}{}\n",
                     describe_checks(run.steadiness.product, checks, run.settings.steady_tolerance_pct),
                     unsteady ? fmt::format("{} cases UNSTEADY (the device's speed drifted; each one's reason says "
                                            "where; a longer --warmup-ms, or a quieter device)", unsteady)
                              : std::string("steady"),
                     warm_note);
}

// Per type, the fastest timed case of each shape, in the order the shapes ran.
std::string best_table(const Run& run) {
  std::string out;
  for (DataType type : all_data_types) {
    std::vector<const CaseResult*> best;  // one per shape
    for (const CaseResult& c : run.cases) {
      if (c.type != type || !c.timed()) continue;
      auto it = std::find_if(best.begin(), best.end(), [&](const CaseResult* b) { return b->shape == c.shape; });
      if (it == best.end()) {
        best.push_back(&c);
      } else if (c.gflops > (*it)->gflops) {
        *it = &c;
      }
    }
    for (size_t i = 0; i < best.size(); ++i) {
      const CaseResult& c = *best[i];
      std::string eff = c.efficiency ? fmt::format("{:.1f}% of {}", *c.efficiency * 100.0, c.efficiency_ceiling) : "";
      if (c.roofline && c.roofline_fraction) {
        eff += fmt::format("{}{:.1f}% of its roofline ({} bound)", eff.empty() ? "" : ", ", *c.roofline_fraction * 100.0,
                           c.roofline->bound());
      }
      out += fmt::format("  {:<4} {:<20} {:<22} {:>10.2f} {:<7} {}{}\n", i == 0 ? to_string(type) : "",
                         shape_text(c.shape), fmt::format("{} {}", to_string(c.config.options.kernel), c.config.label),
                         c.gflops, is_integer(type) ? "GOP/s" : "GFLOP/s", eff,
                         c.status == Status::unsteady ? "  (unsteady)" : "");
    }
  }
  return out.empty() ? "" : "\nsummary: the fastest kernel at each size, by type (median time; efficiency against the "
                            "ceiling named)\n" + out;
}

// The timed cases whose dispatches were further apart than kNoisySpreadPct, worst first (at most 10 named).
std::string noisy_line(const Run& run) {
  std::vector<const CaseResult*> noisy;
  for (const CaseResult& c : run.cases) {
    if (c.timed() && c.stats->spread_pct > kNoisySpreadPct) noisy.push_back(&c);
  }
  if (noisy.empty()) return fmt::format("noisy: none (no timed case spread above {:g}%)\n", kNoisySpreadPct);
  std::sort(noisy.begin(), noisy.end(),
            [](const CaseResult* a, const CaseResult* b) { return a->stats->spread_pct > b->stats->spread_pct; });
  std::string names;
  for (size_t i = 0; i < std::min<size_t>(noisy.size(), 10); ++i) {
    const CaseResult& c = *noisy[i];
    names += fmt::format("{}{} {} {} {} ({:.0f}%)", i ? ", " : "", shape_text(c.shape), to_string(c.type),
                         to_string(c.config.options.kernel), c.config.label, c.stats->spread_pct);
  }
  return fmt::format("noisy: {} timed cases spread above {:g}% ((max - min) / median): {}{}\n", noisy.size(),
                     kNoisySpreadPct, names, noisy.size() > 10 ? ", ..." : "");
}

// How the cases were checked and what the checks cost: the host's seconds in them against the sweep's.
std::string checks_line(const Run& run) {
  size_t full = 0, sampled = 0;
  double seconds = 0.0;
  const auto count = [&](const std::optional<Comparison>& c, double s) {
    if (!c) return;
    ++(c->sampled ? sampled : full);
    seconds += s;
  };
  for (const auto& c : run.cases) count(c.check, c.check_seconds);
  for (const auto& l : run.latency) count(l.check, l.check_seconds);
  for (const auto& h : run.host_products) count(h.check, h.check_seconds);
  const double share = run.sweep_seconds > 0.0 ? 100.0 * seconds / run.sweep_seconds : 0.0;
  return fmt::format("checks: {} by the full reference, {} sampled; {:.1f} s of host time, {:.1f}% of the sweep's "
                     "{:.1f} s\n",
                     full, sampled, seconds, share, run.sweep_seconds);
}

std::string run_summary(const Run& run) {
  size_t counts[5] = {};
  for (const auto& c : run.cases) ++counts[static_cast<int>(c.status)];
  for (const auto& l : run.latency) ++counts[static_cast<int>(l.status)];
  for (const auto& h : run.host_products) ++counts[static_cast<int>(h.status)];
  return fmt::format("{}\n{} cases: {} passed, {} unverified, {} unsteady, {} failed, {} skipped\n{}{}{}",
                     best_table(run), run.cases.size() + run.latency.size() + run.host_products.size(), counts[0], counts[1], counts[4], counts[2],
                     counts[3], checks_line(run), steadiness_line(run), noisy_line(run));
}

}  // namespace vkgemm::cli::bench
