#include "tune_progress.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "bench/bench_progress.hpp"

namespace vkgemm::cli {
namespace {

// Away from a terminal, a progress line at most this often.
constexpr double kLineSeconds = 3.0;
// Timings after stage 2 in one product's search: finalists, splits, block orders, rounds in turns, tiled.
constexpr size_t kLaterTimings = 35;

}  // namespace

size_t planned_timings(size_t all, size_t first_stage, size_t keep) {
  const size_t layouts_per_shape = first_stage ? std::max<size_t>(all / first_stage, 1) - 1 : 0;
  return first_stage + keep * layouts_per_shape + kLaterTimings;
}

TuneProgress::TuneProgress(size_t planned, bool terminal) : planned_(planned), terminal_(terminal) {}

double TuneProgress::seconds_left() const {
  if (measured_ == 0) return -1.0;
  return measured_seconds_ / double(measured_) * double(planned_ > done_ ? planned_ - done_ : 0);
}

void TuneProgress::line(const std::string& text, bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && !terminal_ && std::chrono::duration<double>(now - last_line_).count() < kLineSeconds) return;
  last_line_ = now;
  const double left = seconds_left();
  const std::string eta = left < 0.0 ? "estimating" : fmt::format("~{} left", bench::Progress::duration_text(left));
  if (terminal_) {
    fmt::print(stderr, "\r\033[Ktune: {} ({})", text, eta);
  } else {
    fmt::print(stderr, "tune: {} ({})\n", text, eta);
  }
  std::fflush(stderr);
}

void TuneProgress::stage(const std::string& what) {
  line(what, true);
  after_stage_ = true;
}

void TuneProgress::candidate(const std::string& where, const std::string& config) {
  const auto now = std::chrono::steady_clock::now();
  if (!after_stage_) {
    measured_seconds_ += std::chrono::duration<double>(now - mark_).count();
    ++measured_;
  }
  after_stage_ = false;
  mark_ = now;
  ++done_;
  line(fmt::format("{}: candidate {} of about {} ({})", where, done_, std::max(planned_, done_), config), false);
}

void TuneProgress::clear() {
  if (!terminal_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace vkgemm::cli
