#include <algorithm>
#include <cmath>
#include <numeric>

#include "bench_result.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::cli::bench {

Stats summarize(std::vector<double> samples) {
  if (samples.empty()) throw Error(ErrorCode::invalid_argument, "summarize: no samples");
  std::sort(samples.begin(), samples.end());
  Stats s;
  s.count = samples.size();
  const size_t mid = s.count / 2;
  s.median = s.count % 2 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
  s.min = samples.front();
  s.max = samples.back();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(s.count);
  if (s.count > 1) {
    double ss = 0.0;
    for (const double x : samples) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / double(s.count - 1));
  }
  s.spread_pct = s.median > 0.0 ? 100.0 * (s.max - s.min) / s.median : 0.0;
  return s;
}

std::string_view to_string(Status status) noexcept {
  switch (status) {
    case Status::passed: return "passed";
    case Status::unverified: return "unverified";
    case Status::failed: return "failed";
    case Status::skipped: return "skipped";
    case Status::unsteady: return "unsteady";
  }
  return "?";
}

}  // namespace vkgemm::cli::bench
