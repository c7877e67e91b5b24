// measure_peaks (vkgemm/peak.hpp): its options checked at the door, then the engine's device, memory,
// pipelines and submitter lent to peak/ under the engine's lock.
#include <mutex>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "peak/peak_context.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/peak.hpp"

namespace vkgemm {

std::vector<PeakMeasurement> measure_peaks(Engine& engine, const PeakOptions& options) {
  if (options.repeat == 0 || options.repeat > 1000) {
    throw Error(ErrorCode::invalid_argument, fmt::format("measure_peaks: repeat must be 1 to 1000 (got {})",
                                                         options.repeat));
  }
  if (!(options.target_ms >= 0.0 && options.target_ms <= 1000.0) || !(options.warm_ms <= 10000.0)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("measure_peaks: target_ms must be 0 to 1000 and warm_ms at most 10000 (got {} and {})",
                            options.target_ms, options.warm_ms));
  }
  detail::EngineImpl& e = detail::Access::impl(engine);
  const std::lock_guard lock(e.lock);
  return detail::peak::measure(detail::peak_context(e), options);
}

detail::peak::PeakContext detail::peak_context(EngineImpl& e) {
  return {e.physical, e.device.get(), e.memory.get(), e.submitter.get(), e.pipelines.get()};
}

}  // namespace vkgemm
