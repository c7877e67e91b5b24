// How many times this thread ran each check of a call, so that a test can show the rule of the door
// (engine/src/engine/door.cpp): a call is checked once where it enters the engine, and the layers inside
// (planning, the kernels' launches, the pieces of a partitioned product) trust what passed; a call with the
// key of one that passed (the plan cache's, engine/plan_cache.hpp) counts admitted_before in place of the
// description's, the run options' and the support's checks, which it would pass again. Always compiled:
// a thread-local increment per check costs nothing beside a product, and the tests see the release path.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace vkgemm::detail {

enum class Checked : uint8_t {
  desc,            // check_gemm: the GemmDesc's arguments
  run,             // EngineImpl::check_run: repeat, warmup, beta
  support,         // kernels::check_supported: the device runs the kernel, configuration and types
  buffers,         // EngineImpl::check_buffers: the operands' buffers, offsets and sizes
  blocked_choice,  // kernels::choose_blocked: the blocked kernel's configuration and split for a shape
  blocked_config,  // kernels::check_blocked_config: a blocked configuration against its rules and the device
  admitted_before,  // the door's memo (engine/plan_cache.hpp): a call with the key of one that passed desc,
                    // run and support, which it does not run again
  count_
};

using CheckCounts = std::array<uint64_t, static_cast<size_t>(Checked::count_)>;

inline CheckCounts& check_counts() noexcept {
  thread_local CheckCounts counts{};
  return counts;
}

inline void count_check(Checked what) noexcept { ++check_counts()[static_cast<size_t>(what)]; }

}  // namespace vkgemm::detail
