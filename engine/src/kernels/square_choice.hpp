// auto on products too small for the blocked kernel's tiles. The blocked kernel computes a whole bm x bn
// block of C per workgroup (64x64 to 256x256 in the tables) and pays each block's loads and epilogue however
// little of it lies inside C: for an 8^3 product a 256x256 block is 1/1024 of useful work, and a batch of
// them costs the padding once per entry (8^3 x 64 took 281 ms on blocked 256x256 against 1.4 ms on naive,
// lavapipe). The square kernels (tiled, naive: t x t workgroups, one invocation per element of C) waste at
// most a t x t block. The wave model (tuning/wave_model.hpp) weighs both: the blocked kernel's choice
// (blocked_choice.hpp) at its calibrated unit rate, each square configuration at a measured fraction of it.
#pragma once

#include <optional>

#include "kernels/kernel_spec.hpp"

namespace vkgemm::kernels {

// The square kernel and tile auto takes instead of the blocked kernel for this f32 or f64 product, when the
// model expects it to finish sooner by a margin; nullopt where blocked stays (its configuration measured
// at this shape or given by the caller, another type, K = 0, or blocked expected as fast). The options are
// unchecked against the device: auto tries them as it tries its other candidates.
std::optional<GemmOptions> square_instead_of_blocked(const LaunchContext& ctx, const Problem& problem);

}  // namespace vkgemm::kernels
