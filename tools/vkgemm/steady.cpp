#include "steady.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "vkgemm/error.hpp"

namespace vkgemm::cli {
namespace {

// Timed dispatches of the calibration product at each check; the median counts.
constexpr uint32_t kCalibrationRepeat = 7;
// The largest batch the warm-up doubles to.
constexpr uint32_t kMaxWarmupBatch = 65536;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double default_warmup_ms(const DeviceInfo& device, double requested) {
  if (requested >= 0.0) return requested;
  return device.type == DeviceType::cpu ? 0.0 : kGpuWarmupMs;
}

WarmUp warm_up(double warmup_ms, const std::function<double(uint32_t)>& run_batch) {
  WarmUp out;
  if (warmup_ms <= 0.0) return out;
  double before = 0.0, last = 0.0;  // device time a product in the batch before the last, and in the last
  for (uint32_t n = 1; n <= kMaxWarmupBatch; n *= 2) {
    const double ms = run_batch(n);
    if (ms < 0.0) break;
    out.busy_ms += ms;
    out.dispatches += n;
    out.last_batch = n;
    before = last;
    last = ms / n;
    if (out.busy_ms < warmup_ms) continue;
    out.settled = before > 0.0 && last >= before * (1.0 - kSettledPct / 100.0);
    if (out.settled || out.busy_ms >= kMaxWarmupFactor * warmup_ms) break;
  }
  return out;
}

std::vector<Verdict> judge_segments(const std::vector<Checkpoint>& checks, double tolerance_pct) {
  std::vector<Verdict> out;
  if (checks.empty()) return out;
  double fastest = checks.front().median_ms;
  for (const Checkpoint& c : checks) fastest = std::min(fastest, c.median_ms);
  const double limit = 1.0 + tolerance_pct / 100.0;
  const size_t segments = std::max<size_t>(checks.size() - 1, 1);
  for (size_t s = 0; s < segments; ++s) {
    const Checkpoint& before = checks[s];
    const Checkpoint& after = checks[std::min(s + 1, checks.size() - 1)];
    const Checkpoint& slower = after.median_ms > before.median_ms ? after : before;
    Verdict v;
    v.slowdown = fastest > 0.0 ? slower.median_ms / fastest : 1.0;
    if (v.slowdown > limit) {
      v.steady = false;
      v.reason = fmt::format("the device's speed drifted: the calibration product took {:.2f}x its fastest time "
                             "({:.4f} ms against {:.4f}) at the check at {:.1f} s, beyond the {:g}% tolerance",
                             v.slowdown, slower.median_ms, fastest, slower.at_s, tolerance_pct);
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string describe_checks(const std::string& product, const std::vector<Checkpoint>& checks, double tolerance_pct) {
  if (checks.empty()) return fmt::format("no checks of {}", product);
  double fastest = checks.front().median_ms, slowest = fastest;
  for (const Checkpoint& c : checks) fastest = std::min(fastest, c.median_ms), slowest = std::max(slowest, c.median_ms);
  return fmt::format("{} checks of {}: {:.4f} to {:.4f} ms ({:+.1f}%, tolerance {:g}%)", checks.size(), product,
                     fastest, slowest, fastest > 0.0 ? 100.0 * (slowest - fastest) / fastest : 0.0, tolerance_pct);
}

uint32_t calibration_size(const DeviceInfo& device) { return device.type == DeviceType::cpu ? 256 : 2048; }

struct SteadyCheck::Buffers {
  Buffer a, b, c;
};

SteadyCheck::SteadyCheck(Engine& engine, double warmup_ms, double tolerance_pct)
    : engine_(engine), warmup_ms_(warmup_ms), tolerance_pct_(tolerance_pct), n_(calibration_size(engine.device())),
      buffers_(std::make_unique<Buffers>()) {
  const uint64_t bytes = uint64_t{n_} * n_ * sizeof(float);
  buffers_->a = engine.create_buffer(bytes, "calibration A");
  buffers_->b = engine.create_buffer(bytes, "calibration B");
  buffers_->c = engine.create_buffer(bytes, "calibration C");
  engine.fill(buffers_->a, 0, bytes, 0x3f000000u);  // 0.5: the time does not depend on the values
  engine.fill(buffers_->b, 0, bytes, 0x3f000000u);
  begin_s_ = last_s_ = now_s();
}

SteadyCheck::~SteadyCheck() = default;

void SteadyCheck::check() {
  const MatrixRef a{&buffers_->a, 0, n_, n_, DataType::f32}, b{&buffers_->b, 0, n_, n_, DataType::f32},
      c{&buffers_->c, 0, n_, n_, DataType::f32};
  // The reference is read warm whatever the series' warm-up, so a series that is not warm shows as slower.
  const double warm = checks_.empty() ? std::max(warmup_ms_, default_warmup_ms(engine_.device())) : warmup_ms_;
  GemmOptions options;
  options.kernel = Kernel::automatic;
  const WarmUp w = warm_up(warm, [&](uint32_t n) {
    options.repeat = n, options.warmup = 0;
    const GemmTiming t = engine_.gemm(a, b, c, options);
    if (!t.gpu_timestamps) return -1.0;
    double ms = 0.0;
    for (const double x : t.gpu_ms) ms += x;
    return ms;
  });
  options.repeat = kCalibrationRepeat, options.warmup = w.last_batch;
  const GemmTiming t = engine_.gemm(a, b, c, options);
  if (t.gpu_ms.empty()) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("{} has no timestamps: the steadiness check cannot time its calibration product",
                            engine_.device().name));
  }
  ran_ = fmt::format("{} {}", to_string(t.kernel), t.config);
  last_s_ = now_s();
  checks_.push_back({last_s_ - begin_s_, t.median_gpu_ms(), w.busy_ms});
}

bool SteadyCheck::due() const { return now_s() - last_s_ >= kCheckEverySeconds; }

std::string SteadyCheck::product() const {
  return fmt::format("f32 {0}x{0}x{0} auto{1}", n_, ran_.empty() ? "" : fmt::format(" ({})", ran_));
}

std::string SteadyCheck::summary(const std::function<std::string(size_t)>& label) const {
  std::string unsteady, reason;
  const auto verdicts = this->verdicts();
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].steady) continue;
    unsteady += fmt::format("{}{}", unsteady.empty() ? "" : ", ", label(i));
    if (reason.empty()) reason = verdicts[i].reason;
  }
  const std::string head = describe_checks(product(), checks_, tolerance_pct_);
  if (unsteady.empty()) return head + ": steady\n";
  return fmt::format("{}: UNSTEADY during {} ({})\n", head, unsteady, reason);
}

}  // namespace vkgemm::cli
