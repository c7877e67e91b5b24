// vkgemm bench: progress on stderr (cases done, estimated time left). On a terminal, one bar redrawn in
// place; elsewhere (a log, CI), one line per finished case.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace vkgemm::cli::bench {

class Progress {
 public:
  // Work comes in two kinds that run at very different rates: device work (multiply-adds dispatched) and
  // host work (multiply-adds of the CPU reference). The totals are what finish() will be given in all;
  // the time left is each kind's remaining work at the rate measured so far (the other's, before any).
  Progress(size_t total_cases, double device_work, double host_work, bool enabled, std::FILE* out = stderr);

  void start(const std::string& what);  // the case now running
  // It is done: its work of each kind, and the seconds spent on the host part.
  void finish(double device_work, double host_work, double host_seconds);
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
  double device_total_, host_total_, device_done_ = 0.0, host_done_ = 0.0, host_seconds_ = 0.0;
  std::string current_;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now();
};

}  // namespace vkgemm::cli::bench
