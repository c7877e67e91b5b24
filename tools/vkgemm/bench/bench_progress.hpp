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
// host, its timed dispatches on the device (their timestamps); the rest (pipelines, buffers, the warm-up by
// time, the check's product) is its overhead.
struct Spent {
  double seconds = 0.0, data_seconds = 0.0, host_seconds = 0.0, device_seconds = 0.0;
};

// A case as the sweep knows it before it runs: its type, the kernel asked for (auto included), its shape, and
// whether it is a latency case. What it then ran (auto and "default" resolved) says which pipeline it used.
struct CaseKey {
  std::string type, kernel, shape;
  bool latency = false;
};

// How long the rest of a sweep's cases will take, from the cases done so far: each case costs a base
// overhead, plus each kind of its work (Work: multiply-adds dispatched, multiply-adds checked on the host,
// elements made and uploaded) at the rate measured for that kind, plus the first use of a pipeline it is
// expected to build. The device's rate is the last kRateWindow timed cases' (the sweep grows its sizes, and
// the rate with them); the host's rates are every case's so far. Before a case was timed, the rest is
// estimated at the mean time of a case so far.
// The base overhead (the warm-up by time, buffers, a pipeline already built) is the mean of the cases done
// whose pipeline an earlier case had built, the latency cases' apart once one has run. A pipeline's first use
// costs seconds where the driver compiles it (15 s for u8 4096^3 on coopmat2 on an H200 with a cold driver
// cache, 0.1 s for a tiled one): each kernel's mean of what its first uses cost beyond the base, counted once
// for each (type, kernel, shape) of the rest that no case has run yet, auto taken for the kernel its type's
// last auto case ran. Cases added without a key (and the rest asked for by count) have no first uses.
class TimeEstimate {
 public:
  static constexpr size_t kRateWindow = 16;
  void add(const Work& work, Spent spent);
  void add(const CaseKey& key, const std::string& ran, const Work& work, Spent spent);
  // Seconds for `cases` more cases holding this much work; negative before the first case.
  double seconds_for(double cases, const Work& work) const;
  // Seconds for the cases `rest` names, holding this much work; negative before the first case.
  double seconds_for(const std::vector<CaseKey>& rest, const Work& work) const;

 private:
  struct Done {
    Work work;
    Spent spent;
    bool keyed = false, first_use = false, latency = false;
    std::string kernel;  // the kernel that ran (keyed cases)
  };
  double work_seconds(double cases, const Work& left, double overhead_seconds) const;
  double overhead(const Done& d) const;
  double base_overhead(bool latency) const;
  double first_uses(const std::vector<CaseKey>& rest) const;
  std::vector<Done> done_;
  std::vector<std::string> pipelines_, groups_;  // (type, what ran) and (type, kernel, shape) of the cases done
  std::vector<std::pair<std::string, std::string>> auto_ran_;  // type -> the kernel its last auto case ran
};

// The time left of a sweep from its cases' estimate: the sweep's time beyond its cases (the steadiness checks,
// the result files rewritten) in the share of the time so far it took (`elapsed`, of which its cases took
// `cases_seconds`).
double sweep_seconds_left(double cases_left, double elapsed, double cases_seconds);

class Progress {
 public:
  // `cases` names every case in the order they run, `total` is the work finish() will be given in all (see
  // TimeEstimate).
  Progress(std::vector<CaseKey> cases, const Work& total, bool enabled, std::FILE* out = stderr);

  void start(const std::string& what);  // the case now running
  // It is done: the work it was planned with (counted off the totals), the work it did (less when it was
  // skipped or failed: what the rates are measured on), where its time went (its seconds are measured
  // here, from start()), and the kernel and configuration it ran (CaseResult::ran; empty when it did not run).
  void finish(const Work& planned, const Work& done, const Spent& spent, const std::string& ran);
  void clear();  // erase the bar before something else is printed on the terminal

  // "1m05s", "42s", "1h02m": what the estimate prints.
  static std::string duration_text(double seconds);

 private:
  void draw();
  double elapsed() const;
  double seconds_left() const;  // negative: no estimate yet
  std::FILE* out_;
  bool enabled_, terminal_;
  std::vector<CaseKey> cases_;
  size_t total_cases_, done_cases_ = 0;
  Work total_, done_;
  double cases_seconds_ = 0.0;  // the finished cases' own seconds
  TimeEstimate estimate_;
  std::string current_;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now(), case_begin_ = begin_;
};

}  // namespace vkgemm::cli::bench
