#include "bench_progress.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "bench_result.hpp"

namespace vkgemm::cli::bench {

Progress::Progress(size_t cases, const Work& total, bool enabled, std::FILE* out)
    : out_(out), enabled_(enabled), terminal_(isatty(fileno(out)) != 0), total_cases_(cases), total_(total) {}

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
  const Work left{total_.device - done_.device, total_.host - done_.host, total_.data - done_.data};
  const double cases = estimate_.seconds_for(double(total_cases_ - done_cases_), left);
  return sweep_seconds_left(cases, elapsed(), cases_seconds_);
}

double sweep_seconds_left(double cases_left, double elapsed, double cases_seconds) {
  return cases_left > 0.0 && cases_seconds > 0.0 && elapsed > cases_seconds ? cases_left * elapsed / cases_seconds
                                                                              : cases_left;
}

void TimeEstimate::add(const Work& work, Spent spent) {
  spent.host_seconds = std::min(spent.host_seconds, spent.seconds);
  spent.data_seconds = std::min(spent.data_seconds, spent.seconds - spent.host_seconds);
  spent.device_seconds = std::min(spent.device_seconds, spent.seconds - spent.host_seconds - spent.data_seconds);
  spent.warmup_seconds = std::min(spent.warmup_seconds,
                                  spent.seconds - spent.host_seconds - spent.data_seconds - spent.device_seconds);
  done_.push_back({work, spent});
}

// The overhead of a case: the median of the cases done, their time beyond their work and their warm-up. Not
// the mean: a few cases cost several times the rest (the sweep's first, a warm-up that took long to settle)
// and would be charged to every case left (docs/bench.md has what each read on recorded sweeps).
double TimeEstimate::base_overhead() const {
  std::vector<double> overheads;
  for (const Done& d : done_) {
    const Spent& s = d.spent;
    overheads.push_back(s.seconds - s.host_seconds - s.data_seconds - s.device_seconds - s.warmup_seconds);
  }
  return summarize(std::move(overheads)).median;
}

double TimeEstimate::median_rate(double Work::* work, double Spent::* seconds) const {
  std::vector<double> rates;
  for (const Done& d : done_) {
    if (d.work.*work > 0.0 && d.spent.*seconds > 0.0) rates.push_back(d.work.*work / d.spent.*seconds);
  }
  return rates.empty() ? 0.0 : summarize(std::move(rates)).median;
}

// The device's time in `cases` more cases that dispatch `work` timed multiply-adds: the longer of their
// warm-ups (a case's device time so far, warm-up and timed dispatches, on average: fixed by warmup_ms, not by
// the size) and the work at the last kRateWindow timed cases' rate. Negative: nothing timed yet.
double TimeEstimate::device_seconds(double cases, double work) const {
  double timed_work = 0.0, timed_seconds = 0.0;
  size_t timed = 0;
  for (auto it = done_.rbegin(); it != done_.rend() && timed < kRateWindow; ++it) {
    if (it->spent.device_seconds <= 0.0) continue;
    timed_work += it->work.device;
    timed_seconds += it->spent.device_seconds;
    ++timed;
  }
  if (timed == 0 || timed_work <= 0.0) return -1.0;
  double busy = 0.0;
  for (const Done& d : done_) busy += d.spent.warmup_seconds + d.spent.device_seconds;
  return std::max(cases * busy / double(done_.size()), work * timed_seconds / timed_work);
}

double TimeEstimate::seconds_for(double cases, const Work& left) const {
  if (done_.empty()) return -1.0;
  const double device = device_seconds(cases, left.device);
  if (device < 0.0) {
    double total = 0.0;
    for (const Done& d : done_) total += d.spent.seconds;
    return cases * total / double(done_.size());
  }
  // A kind of host work never measured (no case checked, or none made inputs) adds nothing.
  const double host_rate = median_rate(&Work::host, &Spent::host_seconds);
  const double data_rate = median_rate(&Work::data, &Spent::data_seconds);
  return cases * base_overhead() + device + (host_rate > 0.0 ? left.host / host_rate : 0.0) +
         (data_rate > 0.0 ? left.data / data_rate : 0.0);
}

void Progress::start(const std::string& what) {
  current_ = what;
  case_begin_ = std::chrono::steady_clock::now();
  if (enabled_ && terminal_) draw();
}

void Progress::finish(const Work& planned, const Work& done, const Spent& spent) {
  ++done_cases_;
  done_.device += planned.device, done_.host += planned.host, done_.data += planned.data;
  Spent measured = spent;
  measured.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - case_begin_).count();
  cases_seconds_ += measured.seconds;
  estimate_.add(done, measured);
  if (!enabled_) return;
  if (terminal_) {
    current_.clear();
    draw();
    return;
  }
  const double left = seconds_left();
  fmt::print(out_, "bench: {}/{} cases done ({}), {} in, {}\n", done_cases_, total_cases_, current_,
             duration_text(elapsed()),
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
  fmt::print(out_, "\r\033[K[{}{}] {}/{} cases, {} in, {}{}{}", std::string(static_cast<size_t>(filled), '#'),
             std::string(static_cast<size_t>(kWidth - filled), '-'), done_cases_, total_cases_, duration_text(spent),
             left < 0.0 ? std::string("estimating") : fmt::format("~{} left", duration_text(left)),
             current_.empty() ? "" : ", now ", current_);
  std::fflush(out_);
}

}  // namespace vkgemm::cli::bench
