#include "bench_progress.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <unistd.h>

namespace vkgemm::cli::bench {

Progress::Progress(std::vector<CaseKey> cases, const Work& total, bool enabled, std::FILE* out)
    : out_(out), enabled_(enabled), terminal_(isatty(fileno(out)) != 0), cases_(std::move(cases)),
      total_cases_(cases_.size()), total_(total) {}

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
  const std::vector<CaseKey> rest(cases_.begin() + std::ptrdiff_t(done_cases_), cases_.end());
  const double cases = estimate_.seconds_for(rest, left);
  return sweep_seconds_left(cases, elapsed(), cases_seconds_);
}

double sweep_seconds_left(double cases_left, double elapsed, double cases_seconds) {
  return cases_left > 0.0 && cases_seconds > 0.0 && elapsed > cases_seconds ? cases_left * elapsed / cases_seconds
                                                                              : cases_left;
}

namespace {

std::string kernel_of(const std::string& ran) { return ran.substr(0, ran.find(' ')); }

template <typename T>
bool contains(const std::vector<T>& v, const T& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

void TimeEstimate::add(const Work& work, Spent spent) {
  spent.host_seconds = std::min(spent.host_seconds, spent.seconds);
  spent.data_seconds = std::min(spent.data_seconds, spent.seconds - spent.host_seconds);
  spent.device_seconds = std::min(spent.device_seconds, spent.seconds - spent.host_seconds - spent.data_seconds);
  done_.push_back({work, spent});
}

void TimeEstimate::add(const CaseKey& key, const std::string& ran, const Work& work, Spent spent) {
  add(work, spent);
  if (ran.empty()) return;  // skipped: it built nothing
  Done& d = done_.back();
  const std::string pipeline = key.type + " " + ran, kernel = kernel_of(ran);
  d.keyed = true, d.latency = key.latency, d.kernel = kernel;
  d.first_use = !contains(pipelines_, pipeline);
  if (d.first_use) pipelines_.push_back(pipeline);
  const std::string group = key.type + " " + kernel + " " + key.shape;
  if (!contains(groups_, group)) groups_.push_back(group);
  if (key.kernel == "auto") {
    auto it = std::find_if(auto_ran_.begin(), auto_ran_.end(), [&](const auto& p) { return p.first == key.type; });
    if (it == auto_ran_.end()) auto_ran_.emplace_back(key.type, kernel);
    else it->second = kernel;
  }
}

double TimeEstimate::overhead(const Done& d) const {
  return d.spent.seconds - d.spent.host_seconds - d.spent.data_seconds - d.spent.device_seconds;
}

// The mean overhead of the cases done that built no pipeline: of latency cases or of the others, else of
// either, else of every case.
double TimeEstimate::base_overhead(bool latency) const {
  for (const int pass : {0, 1, 2}) {
    double sum = 0.0;
    size_t n = 0;
    for (const Done& d : done_) {
      if (pass < 2 && d.first_use) continue;
      if (pass == 0 && d.latency != latency) continue;
      sum += overhead(d), ++n;
    }
    if (n > 0) return sum / double(n);
  }
  return 0.0;
}

double TimeEstimate::first_uses(const std::vector<CaseKey>& rest) const {
  // What a first use of each kernel cost beyond the base, in the mean; of every kernel for one not seen yet.
  std::vector<std::pair<std::string, std::pair<double, size_t>>> cost;
  double all = 0.0;
  size_t all_n = 0;
  for (const Done& d : done_) {
    if (!d.first_use) continue;
    const double excess = std::max(0.0, overhead(d) - base_overhead(d.latency));
    auto it = std::find_if(cost.begin(), cost.end(), [&](const auto& c) { return c.first == d.kernel; });
    if (it == cost.end()) it = cost.insert(cost.end(), {d.kernel, {0.0, 0}});
    it->second.first += excess, ++it->second.second, all += excess, ++all_n;
  }
  double seconds = 0.0;
  std::vector<std::string> expected;
  for (const CaseKey& key : rest) {
    std::string kernel = key.kernel;
    if (kernel == "auto") {
      const auto it = std::find_if(auto_ran_.begin(), auto_ran_.end(), [&](const auto& p) { return p.first == key.type; });
      if (it != auto_ran_.end()) kernel = it->second;
    }
    const std::string group = key.type + " " + kernel + " " + key.shape;
    if (contains(groups_, group) || contains(expected, group)) continue;
    expected.push_back(group);
    const auto it = std::find_if(cost.begin(), cost.end(), [&](const auto& c) { return c.first == kernel; });
    if (it != cost.end()) seconds += it->second.first / double(it->second.second);
    else if (all_n > 0) seconds += all / double(all_n);
  }
  return seconds;
}

double TimeEstimate::seconds_for(double cases, const Work& left) const {
  if (done_.empty()) return -1.0;
  return work_seconds(cases, left, cases * base_overhead(false));
}

double TimeEstimate::seconds_for(const std::vector<CaseKey>& rest, const Work& left) const {
  if (done_.empty()) return -1.0;
  double overheads = first_uses(rest);
  for (const CaseKey& key : rest) overheads += base_overhead(key.latency);
  return work_seconds(double(rest.size()), left, overheads);
}

// `overheads` for the cases, plus their work at the rates measured.
double TimeEstimate::work_seconds(double cases, const Work& left, double overheads) const {
  double total = 0.0;
  Work host_work;  // of the host's kinds: the checks' multiply-adds, the elements made and uploaded
  Spent host_spent;
  for (const Done& d : done_) {
    total += d.spent.seconds;
    host_work.host += d.work.host, host_spent.host_seconds += d.spent.host_seconds;
    host_work.data += d.work.data, host_spent.data_seconds += d.spent.data_seconds;
  }
  double device_work = 0.0, device_seconds = 0.0;
  size_t timed = 0;
  for (auto it = done_.rbegin(); it != done_.rend() && timed < kRateWindow; ++it) {
    if (it->spent.device_seconds <= 0.0) continue;
    device_work += it->work.device;
    device_seconds += it->spent.device_seconds;
    ++timed;
  }
  if (timed == 0 || device_work <= 0.0) return cases * total / double(done_.size());
  const double device_rate = device_work / device_seconds;
  const double host_rate = host_spent.host_seconds > 0.0 && host_work.host > 0.0
                               ? host_work.host / host_spent.host_seconds : device_rate;
  const double data_seconds =
      host_work.data > 0.0 ? left.data * host_spent.data_seconds / host_work.data : 0.0;
  return overheads + left.device / device_rate + left.host / host_rate + data_seconds;
}

void Progress::start(const std::string& what) {
  current_ = what;
  case_begin_ = std::chrono::steady_clock::now();
  if (enabled_ && terminal_) draw();
}

void Progress::finish(const Work& planned, const Work& done, const Spent& spent, const std::string& ran) {
  ++done_cases_;
  done_.device += planned.device, done_.host += planned.host, done_.data += planned.data;
  Spent measured = spent;
  measured.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - case_begin_).count();
  cases_seconds_ += measured.seconds;
  estimate_.add(cases_[done_cases_ - 1], ran, done, measured);
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
