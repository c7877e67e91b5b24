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
// host, its timed dispatches on the device (their timestamps); the rest (buffers, the warm-up by time, the
// check's product) is its overhead.
struct Spent {
  double seconds = 0.0, data_seconds = 0.0, host_seconds = 0.0, device_seconds = 0.0;
};

// How long the rest of a sweep's cases will take, from the cases done so far: each case costs a base
// overhead, plus each kind of its work (Work: multiply-adds dispatched, multiply-adds checked on the host,
// elements made and uploaded) at the rate measured for that kind. The device's rate is the last kRateWindow
// timed cases' (the sweep grows its sizes, and the rate with them); the host's rates are every case's so far.
// The base overhead is the mean of the cases done, latency cases and others alike (on an H100 both took
// about half a second beyond their work). No case builds a pipeline (bench_prebuild.hpp: the sweep builds
// them all before its first case), so the overhead varies little from case to case; a first use inside a
// case was 0.1 to 15 s on NVIDIA with a cold driver cache, which no mean could predict. Before a case was
// timed, the rest is estimated at the mean time of a case so far.
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
