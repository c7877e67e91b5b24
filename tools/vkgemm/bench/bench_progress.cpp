#include "bench_progress.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <unistd.h>

namespace vkgemm::cli::bench {

Progress::Progress(size_t total_cases, double device_work, double host_work, bool enabled, std::FILE* out)
    : out_(out), enabled_(enabled), terminal_(isatty(fileno(out)) != 0), total_cases_(total_cases),
      device_total_(device_work), host_total_(host_work) {}

std::string Progress::duration_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
}

double Progress::seconds_left() const {
  return estimate_.seconds_for(double(total_cases_ - done_cases_), device_total_ - device_done_,
                               host_total_ - host_done_);
}

void TimeEstimate::add(double device_work, double host_work, double seconds, double host_seconds,
                       double device_seconds) {
  host_seconds = std::min(host_seconds, seconds);
  device_seconds = std::min(device_seconds, seconds - host_seconds);
  done_.push_back({device_work, host_work, seconds, host_seconds, device_seconds});
}

double TimeEstimate::seconds_for(double cases, double device_work, double host_work) const {
  if (done_.empty()) return -1.0;
  double total = 0.0, overhead = 0.0, host_work_done = 0.0, host_seconds = 0.0;
  for (const Done& d : done_) {
    total += d.seconds;
    overhead += d.seconds - d.host_seconds - d.device_seconds;
    host_work_done += d.host_work;
    host_seconds += d.host_seconds;
  }
  double device_work_done = 0.0, device_seconds = 0.0;
  size_t timed = 0;
  for (auto it = done_.rbegin(); it != done_.rend() && timed < kRateWindow; ++it) {
    if (it->device_seconds <= 0.0) continue;
    device_work_done += it->device_work;
    device_seconds += it->device_seconds;
    ++timed;
  }
  if (timed == 0 || device_work_done <= 0.0) return cases * total / double(done_.size());
  const double device_rate = device_work_done / device_seconds;
  const double host_rate = host_seconds > 0.0 && host_work_done > 0.0 ? host_work_done / host_seconds : device_rate;
  return cases * overhead / double(done_.size()) + device_work / device_rate + host_work / host_rate;
}

void Progress::start(const std::string& what) {
  current_ = what;
  case_begin_ = std::chrono::steady_clock::now();
  if (enabled_ && terminal_) draw();
}

void Progress::finish(double planned_device, double planned_host, double device_work, double host_work,
                      double host_seconds, double device_seconds) {
  ++done_cases_;
  device_done_ += planned_device;
  host_done_ += planned_host;
  const auto now = std::chrono::steady_clock::now();
  estimate_.add(device_work, host_work, std::chrono::duration<double>(now - case_begin_).count(), host_seconds,
                device_seconds);
  if (!enabled_) return;
  if (terminal_) {
    current_.clear();
    draw();
    return;
  }
  const double left = seconds_left();
  fmt::print(out_, "bench: {}/{} cases done ({}), {}\n", done_cases_, total_cases_, current_,
             left < 0.0 ? std::string("no estimate yet") : fmt::format("about {} left", duration_text(left)));
  std::fflush(out_);
}

void Progress::clear() {
  if (enabled_ && terminal_) {
    fmt::print(out_, "\r\033[K");
    std::fflush(out_);
  }
}

void Progress::draw() {
  constexpr int kWidth = 30;
  const double left = seconds_left(), spent = elapsed();
  const double fraction = left < 0.0 ? 0.0 : spent + left > 0.0 ? spent / (spent + left) : 1.0;
  const int filled = std::clamp(static_cast<int>(fraction * kWidth), 0, kWidth);
  fmt::print(out_, "\r\033[K[{}{}] {}/{} cases, {}{}{}", std::string(static_cast<size_t>(filled), '#'),
             std::string(static_cast<size_t>(kWidth - filled), '-'), done_cases_, total_cases_,
             left < 0.0 ? std::string("estimating") : fmt::format("~{} left", duration_text(left)),
             current_.empty() ? "" : ", now ", current_);
  std::fflush(out_);
}

}  // namespace vkgemm::cli::bench
