// A warm, steady device for every timed measurement: the one warm-up rule and the one steadiness rule that
// vkgemm run, bench, tune and peak share.
//
// Warm-up: a GPU that sat idle (before the process, while pipelines compiled, while the CPU checked a result)
// runs at its idle clock until kept busy for a while (an H100 idles at 375 MHz of 1980). Before a timed
// series, untimed products until the device has been busy for the warm-up time: kGpuWarmupMs on a GPU,
// none on a CPU device (VkPhysicalDeviceType CPU: no clock to raise, and warming would only cost time).
//
// Steadiness: a fixed calibration product (calibration_size) is timed at the start of a series of
// measurements (after at least the device's default warm-up: the reference), then periodically and at the
// end after the same warm-up the measurements get. The measurements between two checks are unsteady when
// either check read the calibration product more than the tolerance slower than the fastest check of the
// series: the device's speed drifted (it clocked down, it throttled, another process took it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vkgemm/engine.hpp"

namespace vkgemm::cli {

// The default warm-up on a GPU, in ms of device time.
constexpr double kGpuWarmupMs = 200.0;
// After the warm-up time, batches go on while the device still speeds up: while a batch's time a product is
// more than kSettledPct below the batch before's (a clock, or a memory clock, still rising), up to
// kMaxWarmupFactor times the warm-up time: the time alone left some products slow (docs/bench.md).
constexpr double kSettledPct = 2.0;
constexpr double kMaxWarmupFactor = 10.0;
// Measurements whose neighbouring checks read the calibration product more than this much slower than the
// series' fastest check are unsteady.
constexpr double kSteadyTolerancePct = 10.0;
// A steadiness check at least this often (seconds of wall time), besides the start and the end.
constexpr double kCheckEverySeconds = 5.0;

// The warm-up time for `device`: `requested` where given (>= 0), else kGpuWarmupMs on a GPU and 0 on a CPU.
double default_warmup_ms(const DeviceInfo& device, double requested = -1.0);

// What a warm-up did: the device time its untimed products took, and the last batch's count (run as many
// again inside the timed submission, just before the timed dispatches, so no idle gap comes between).
struct WarmUp {
  double busy_ms = 0.0;
  uint32_t last_batch = 0;
  uint32_t dispatches = 0;  // untimed products in all
  bool settled = false;     // the last two batches ran at the same speed (kSettledPct); false: none ran, or
                            // the device still sped up when kMaxWarmupFactor times the warm-up had run
};

// Untimed products, doubling in number (1, 2, 4, ... at most 65536 in one batch), until `warmup_ms` of device
// time has run and the speed has settled (kSettledPct, kMaxWarmupFactor). run_batch(n) runs n products in
// one submission and returns their device time in ms (negative: the device has no timestamps, and the
// warm-up stops).
WarmUp warm_up(double warmup_ms, const std::function<double(uint32_t)>& run_batch);

// One reading of the calibration product.
struct Checkpoint {
  double at_s = 0.0;       // seconds since the series started
  double median_ms = 0.0;  // the calibration product's median device time
  double warmup_ms = 0.0;  // the warm-up before it
};

// Whether the measurements between checks `segment` and `segment + 1` (the last segment: after the last
// check, when the series was cut short) were steady, and why not.
struct Verdict {
  bool steady = true;
  double slowdown = 1.0;  // the slower neighbouring check's time over the fastest check's
  std::string reason;     // empty when steady
};

// The verdict of every segment of a series with these checks (checks.size() - 1 segments; one when there is
// a single check). `tolerance_pct` as kSteadyTolerancePct.
std::vector<Verdict> judge_segments(const std::vector<Checkpoint>& checks, double tolerance_pct);

// "5 checks of f32 2048x2048x2048 auto (...): 0.4100 to 0.4300 ms (+4.9%, tolerance 10%)"
std::string describe_checks(const std::string& product, const std::vector<Checkpoint>& checks, double tolerance_pct);

// The calibration product's side: f32 n x n x n with auto, 2048 on a GPU and 256 on a CPU device (each a
// fraction of a millisecond to a few on the devices it is for: cheap to repeat, long enough to time).
uint32_t calibration_size(const DeviceInfo& device);

// A series' steadiness checks: the calibration product's buffers, its checkpoints and their verdicts.
class SteadyCheck {
 public:
  // `warmup_ms`: the warm-up each measurement of the series gets.
  SteadyCheck(Engine& engine, double warmup_ms, double tolerance_pct);
  ~SteadyCheck();
  SteadyCheck(const SteadyCheck&) = delete;
  SteadyCheck& operator=(const SteadyCheck&) = delete;

  void check();       // times the calibration product now (the first check: the reference, fully warmed)
  bool due() const;   // kCheckEverySeconds have passed since the last check
  size_t segment() const { return checks_.empty() ? 0 : checks_.size() - 1; }  // of a measurement made now
  const std::vector<Checkpoint>& checks() const { return checks_; }
  std::vector<Verdict> verdicts() const { return judge_segments(checks_, tolerance_pct_); }
  double tolerance_pct() const { return tolerance_pct_; }
  std::string product() const;  // "f32 2048x2048x2048 auto (blocked 128x128x8 ...)"
  // describe_checks, then ": steady", or the unsteady segments' labels (label(i): what ran in segment i) and
  // the first one's reason, one line.
  std::string summary(const std::function<std::string(size_t)>& label) const;

 private:
  struct Buffers;
  Engine& engine_;
  double warmup_ms_, tolerance_pct_;
  uint32_t n_;
  std::string ran_;
  std::unique_ptr<Buffers> buffers_;
  std::vector<Checkpoint> checks_;
  double begin_s_ = 0.0, last_s_ = 0.0;
};

}  // namespace vkgemm::cli
