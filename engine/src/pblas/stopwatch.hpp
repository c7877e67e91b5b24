// Seconds between laps, for VKGEMM_BLAS_VERBOSE=2's line a call (entry_points.cpp, streamed.cpp).
#pragma once

#include <chrono>

namespace vkgemm::pblas {

class Stopwatch {
 public:
  // Seconds since the last lap (or since it was made).
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace vkgemm::pblas
