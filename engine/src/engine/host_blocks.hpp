// Host-memory products past what the device allocates at once: cut into blocks, each a host product of its
// own, so that a matrix of more than maxMemoryAllocationSize bytes (a ScaLAPACK rank's local block of 24576^2
// doubles: 4.8 GB) runs on the device instead of being refused. The rule and why:
// docs/design/host-copies.md ("Blocks"); the run: EngineImpl::gemm_host_blocks (host_blocks.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "vkgemm/blas.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/options.hpp"

namespace vkgemm::detail {

// A product cut along M (C's and op(A)'s rows), N (C's and op(B)'s columns) and K (the sums: the blocks after
// the first along K add to C with beta 1).
struct BlockCut {
  uint64_t rows = 0, cols = 0, depth = 0;             // one block's M, N and K (the last ones may be smaller)
  uint64_t row_blocks = 1, col_blocks = 1, k_blocks = 1;
};

// Block (i, j, l) of `desc` cut by `cut`: its descriptor (the same leading dimensions, given explicitly; beta
// 1 after the first K block) and where its A, B and C begin in the caller's operands, in elements.
struct Block {
  GemmDesc desc;
  uint64_t a = 0, b = 0, c = 0;
};
Block block_of(const GemmDesc& desc, const BlockCut& cut, uint64_t i, uint64_t j, uint64_t l);

// The axis ('M', 'N' or 'K') that indexes the lines of `which` ('A', 'B' or 'C') as stored: cutting it is what
// shrinks that operand's storage (a block of a row-major B's columns spans all of its rows).
char line_axis(const GemmDesc& desc, char which);

// How to cut a product (batch 1, reading A and B, no epilogue vector) whose operands do not fit (`fits` says
// false) into blocks that do: while the first (largest) block does not fit, the block count doubles along the
// line axis of its largest operand. Blocks of 256 lines or more are whole multiples of 256 (the kernels'
// largest tile side). K is cut only for a call that runs its product once (`one_run`: no warm-up, one timed
// run), since each K block adds to C. Empty where the product is not cut this way, where one line of an
// operand is more than the device allocates, or where it would take more than 65536 blocks (operands that
// are mostly the gaps of a huge leading dimension).
std::optional<BlockCut> block_cut(const GemmDesc& desc, bool one_run, const std::function<bool(const GemmDesc&)>& fits);

// block_cut for a host product on `device`: a block fits where check_fits (plan/schedule.hpp) passes it.
std::optional<BlockCut> host_block_cut(const GemmDesc& desc, const GemmOptions& options, const DeviceInfo& device);

}  // namespace vkgemm::detail
