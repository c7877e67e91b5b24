// vkgemm bench: progress on stderr (cases done, estimated time left). On a terminal, one bar redrawn in
// place; elsewhere (a log, CI), one line per finished case.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace vkgemm::cli::bench {

// How long the rest of a sweep will take, from the cases done so far. A case costs an overhead (buffers,
// uploads, pipelines, the warm-up by time: the mean of what its time held beyond its timed dispatches and
// its reference) plus its device work (multiply-adds dispatched) at the rate the timestamps measured over
// the last kRateWindow timed cases (the sweep grows its sizes, and the rate with them) plus its host work
// (multiply-adds of the CPU reference) at the host's measured rate. Before a case was timed, the rest is
// estimated at the mean time of a case so far.
class TimeEstimate {
 public:
  static constexpr size_t kRateWindow = 16;
  // device_seconds: the timed dispatches' device time (0: none timed).
  void add(double device_work, double host_work, double seconds, double host_seconds, double device_seconds);
  // Seconds for `cases` more cases holding this much work; negative before the first case.
  double seconds_for(double cases, double device_work, double host_work) const;

 private:
  struct Done {
    double device_work, host_work, seconds, host_seconds, device_seconds;
  };
  std::vector<Done> done_;
};

class Progress {
 public:
  // The totals are the work of each kind finish() will be given in all (see TimeEstimate).
  Progress(size_t total_cases, double device_work, double host_work, bool enabled, std::FILE* out = stderr);

  void start(const std::string& what);  // the case now running
  // It is done: the work of each kind it was planned with (counted off the totals), the work it did
  // (less when it was skipped or failed: what the rates are measured on), and its seconds on the host part.
  void finish(double planned_device, double planned_host, double device_work, double host_work, double host_seconds,
              double device_seconds);
  void clear();                         // erase the bar before something else is printed on the terminal

  // "1m05s", "42s", "1h02m": what the estimate prints.
  static std::string duration_text(double seconds);

 private:
  void draw();
  double elapsed() const;
  double seconds_left() const;  // negative: no estimate yet
  std::FILE* out_;
  bool enabled_, terminal_;
  size_t total_cases_, done_cases_ = 0;
  double device_total_, host_total_, device_done_ = 0.0, host_done_ = 0.0;
  TimeEstimate estimate_;
  std::string current_;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now(), case_begin_ = begin_;
};

}  // namespace vkgemm::cli::bench
