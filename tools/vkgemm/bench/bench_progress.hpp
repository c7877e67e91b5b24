// vkgemm bench: progress on stderr (cases done, time spent, estimated time left). On a terminal, one bar
// redrawn in place; elsewhere (a log, CI), one line per finished case.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "bench_jobs.hpp"

namespace vkgemm::cli::bench {

// Where a finished case's wall time went, as measured: its inputs made and uploaded (data), its check on the
// host, its warm-up by time (the device's busy time in it), its timed dispatches on the device (their
// timestamps); the rest (buffers, submissions and waits, the checked product) is its overhead.
struct Spent {
  double seconds = 0.0, data_seconds = 0.0, host_seconds = 0.0, device_seconds = 0.0, warmup_seconds = 0.0;
};

// How long the rest of a sweep's cases will take, from the cases done so far. Each case costs:
// - its overhead: the median of the cases done (latency cases and others alike; no case builds a pipeline,
//   bench_prebuild.hpp, so it varies little, but a few cases cost several times the rest, and the mean would
//   charge them to every case left);
// - its device time: the warm-up by time runs the case's product until the device has been busy
//   `warmup_ms` (more while its speed still changes), whatever the size, so the device's time in a case is
//   that (the mean measured, with the timed dispatches) unless the timed dispatches at the device's rate take
//   longer. That rate is the last kRateWindow timed cases' and comes from the smaller sizes before (the sweep
//   grows), where a dispatch is bound by its launch, not by its work, so it makes large dispatches far too
//   long (docs/bench.md). Taken as the longer of the two, not their sum, that slow rate only counts
//   where products outlast the warm-up. (It is the longer for the cases left as a whole, known only by their
//   sum of work: where some outlast their warm-ups and others do not, it reads short, by at most half.);
// - its inputs and its check at the host's rates per element and per multiply-add: the median of the cases'
//   own rates, which a one-off stall (a case whose inputs took several times the others') does not move as
//   it moves the rate of their sums.
// Before a case was timed, the rest is estimated at the mean time of a case so far.
class TimeEstimate {
 public:
  static constexpr size_t kRateWindow = 16;
  void add(const Work& work, Spent spent);
  // Seconds for `cases` more cases holding this much work; negative before the first case.
  double seconds_for(double cases, const Work& work) const;

 private:
  struct Done {
    Work work;
    Spent spent;
  };
  double base_overhead() const;
  double device_seconds(double cases, double work) const;
  // The median of the cases' rates of one kind of work (`work` per `seconds`); 0 when none was measured.
  double median_rate(double Work::* work, double Spent::* seconds) const;
  std::vector<Done> done_;
};

// The time left of a sweep from its cases' estimate: the sweep's time beyond its cases (the steadiness checks,
// the result files rewritten) in the share of the time so far it took (`elapsed`, of which its cases took
// `cases_seconds`).
double sweep_seconds_left(double cases_left, double elapsed, double cases_seconds);

class Progress {
 public:
  // `cases` cases will run, holding `total` work in all (what finish() will be given; see TimeEstimate).
  Progress(size_t cases, const Work& total, bool enabled, std::FILE* out = stderr);

  void start(const std::string& what);  // the case now running
  // It is done: the work it was planned with (counted off the totals), the work it did (less when it was
  // skipped or failed: what the rates are measured on) and where its time went (its seconds are measured
  // here, from start()).
  void finish(const Work& planned, const Work& done, const Spent& spent);
  void clear();  // erase the bar before something else is printed on the terminal

  // "1m05s", "42s", "1h02m": what the estimate prints.
  static std::string duration_text(double seconds);

 private:
  void draw();
  double elapsed() const;
  double seconds_left() const;  // negative: no estimate yet
  std::FILE* out_;
  bool enabled_, terminal_;
  size_t total_cases_, done_cases_ = 0;
  Work total_, done_;
  double cases_seconds_ = 0.0;  // the finished cases' own seconds
  TimeEstimate estimate_;
  std::string current_;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now(), case_begin_ = begin_;
};

}  // namespace vkgemm::cli::bench
