// vkgemm tune: the estimate printed before the search starts and the progress on stderr while it runs (on a
// terminal one line redrawn in place, elsewhere a line at most every few seconds), with the time left from
// the measured time per candidate (the time between two candidates; a stage's pipeline builds, before its
// first candidate, are not counted as a candidate's).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace vkgemm::cli {

// About how many candidates one product's search times: stage 1 (`first_stage`), the warp layouts of the
// `keep` leaders (the configurations per tile shape each), then a fixed number for the finalists, their
// splits and block orders, the rounds in turns and the tiled baseline.
size_t planned_timings(size_t all, size_t first_stage, size_t keep);

class TuneProgress {
 public:
  TuneProgress(size_t planned, bool terminal);
  // What the search does now ("[1/8] 1024x1024x1024 nn: building 40 pipelines"): always printed.
  void stage(const std::string& what);
  // One more candidate timed (or failed); printed on a terminal, else at most every few seconds.
  void candidate(const std::string& where, const std::string& config);
  void clear();  // erase the terminal line before other output
  double seconds_left() const;  // negative: no estimate yet

 private:
  void line(const std::string& text, bool force);
  size_t planned_, done_ = 0, measured_ = 0;
  double measured_seconds_ = 0.0;
  bool after_stage_ = true;
  bool terminal_;
  std::chrono::steady_clock::time_point mark_ = std::chrono::steady_clock::now(), last_line_{};
};

}  // namespace vkgemm::cli
