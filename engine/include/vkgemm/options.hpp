// How one product runs: GemmOptions (the kernel and its configuration, repeats, fp16 sums, the K bound
// per submission) and the blocked kernel's BlockedConfig. Apart from engine.hpp so that the library's
// planning code, and callers who only build options, need nothing of the Engine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vkgemm/types.hpp"

namespace vkgemm {

// The blocked kernel's parameters. A workgroup computes a bm x bn block of C, stepping bk along K; each
// of its (bm / tm) * (bn / tn) invocations holds a tm x tn block in registers; 32-invocation groups are laid
// out (32 / lanes_n) x lanes_n over the invocation grid. split_k > 1 cuts K into that many slices summed by
// a second pass. Workgroups walk group_m block rows at a time (1: plain row order) so that neighbours share
// L2. bm = 0 (the default) lets the engine choose everything, from the tuning table.
struct BlockedConfig {
  uint32_t bm = 0, bn = 0, bk = 0, tm = 0, tn = 0, lanes_n = 0;
  uint32_t split_k = 0;  // 0: the engine chooses; 1: no split
  uint32_t group_m = 1;

  bool chosen() const noexcept { return bm != 0; }
  friend bool operator==(const BlockedConfig&, const BlockedConfig&) = default;
};

// "128x128x8 8x8 lanes 8 split 1 group 8": bm x bn x bk, tm x tn, then optionally lanes_n (default 8),
// split_k (default 0: auto) and group_m (default 1).
std::string to_string(const BlockedConfig& config);
// Parses the form above; throws vkgemm::Error(invalid_argument) naming what is wrong.
BlockedConfig parse_blocked_config(std::string_view text);

// The largest GemmOptions::tile any kernel takes (1 to this; what a device runs may be less: check_supported).
inline constexpr uint32_t kMaxTile = 1024;

// How a call that waits for its own submission (Engine::gemm, submit_gemm, Engine::run) waits for the
// device. A blocking wait (vkWaitSemaphores, vkWaitForFences) sleeps in the kernel and wakes tens of
// microseconds after the device is done; polling the timeline semaphore's value (or the fence's status) wakes
// as soon as it is, at the cost of one CPU core busy while it polls. Every poll is bounded by
// kWaitSpinMicroseconds, after which the call sleeps as it would have.
// automatic: the engine's default: VKGEMM_WAIT (auto, spin or sleep) where set; else, on a GPU, poll where the
// plan's previous submission completed within the bound (or this is its first), sleep at once where it did
// not (a long product gains nothing from polling); on a CPU device (lavapipe) sleep, as polling takes a core
// from the driver's own threads. spin: poll for up to kWaitSpinMicroseconds, then sleep; on any device.
// sleep: sleep at once.
enum class WaitMode : uint8_t { VKGEMM_WAIT_MODES(VKGEMM_NAMES_ENUMERATOR) };
inline constexpr uint32_t kWaitSpinMicroseconds = 200;
std::string_view to_string(WaitMode mode) noexcept;  // "auto", "spin", "sleep"

// Whether f64 and f32 products may be emulated through exact int8 products (Kernel::ozaki, Ozaki scheme II:
// docs/design/ozaki.md). native: never, auto takes the device's own f64/f32 kernels. emulated: auto may
// take the emulation for f64 and f32 where the device has int8 matrix units. Naming Kernel::ozaki asks for
// the emulation whatever the policy.
enum class Precision { VKGEMM_PRECISIONS(VKGEMM_NAMES_ENUMERATOR) };
#define VKGEMM_PRECISION_VALUE(enumerator, spelling) Precision::enumerator,
inline constexpr Precision all_precisions[] = {VKGEMM_PRECISIONS(VKGEMM_PRECISION_VALUE)};
#undef VKGEMM_PRECISION_VALUE
std::string_view to_string(Precision precision) noexcept;  // "native", "emulated"
std::optional<Precision> parse_precision(std::string_view name) noexcept;

struct GemmOptions {
  Kernel kernel = Kernel::automatic;
  uint32_t tile = 16;     // tiled: the side of the shared-memory tile; naive: the side of the workgroup
  BlockedConfig blocked;  // blocked: its configuration (default: chosen by the engine)
  uint32_t repeat = 1;    // timed dispatches, each between two timestamps, with a barrier between them
  uint32_t warmup = 0;    // untimed dispatches before them (with beta != 0, warmup + repeat must be 1)
  // Engine::gemm and the engine's other waiting calls: write timestamps around each timed dispatch
  // (GemmTiming::gpu_ms). They cost a small product GPU-side time of their own (a few microseconds;
  // docs/design/planner.md): false gives the product alone, with gpu_ms empty.
  // Plans take GemmPlanOptions::timestamps instead (off by default there).
  bool timestamps = true;
  // f16 inputs only: accumulate in fp16 instead of fp32 (C must then be f16). Faster on some hardware, but
  // a sum above 65504 overflows to infinity and the error grows with k at fp16's 2^-11 per addition;
  // see reference.hpp for the bound. Off by default.
  bool f16_accumulate = false;
  // Display-driver watchdogs reset a GPU whose submission runs too long (Windows' TDR: 2 seconds). With a
  // bound, a product whose K is longer is cut along K into chunks of at most this many (rounded down to
  // the kernel's K step where that leaves at least one), summed in order: the first applies beta, the
  // rest add to C (the same result up to float rounding; exactly for i32). Engine::gemm submits and
  // waits for each chunk on its own; record_gemm and submit_gemm record them as consecutive dispatches
  // of one command buffer. 0: no bound. The cut matches the caller's bound, not a measured time: pick it
  // from a benchmark on the slowest device (a chunk costs about 2·m·n·bound flops).
  uint32_t max_k_per_submission = 0;
  // How the call waits for the device (WaitMode above); Engine::gemm and submit_gemm only, and Engine::run
  // through its plan's options.
  WaitMode wait = WaitMode::automatic;
  // f64 and f32: whether auto may emulate them (Precision above; Kernel::ozaki asks for it whatever this says).
  Precision precision = Precision::native;
  // Kernel::ozaki: the number of moduli, 2 to 20 (0: the type's default, 14 for f64 and 7 for f32, which meet
  // the native kernel's bound, the span guard choosing up to two more on the device; fewer are faster and
  // coarser: docs/correctness.md, "Emulated products").
  uint32_t emulation_moduli = 0;
};

}  // namespace vkgemm
