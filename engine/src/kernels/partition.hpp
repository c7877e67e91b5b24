// Cutting one row-major product into pieces that each fit the device's limits: a dispatch grid within
// maxComputeWorkGroupCount on every axis, every operand binding within maxStorageBufferRange, and K
// chunks no longer than the caller's watchdog bound. Pure arithmetic on sizes and offsets, no Vulkan, so
// the tests can call it with any limits.
//
// A piece is the sub-product C[b0.., m0.., n0..] (+)= alpha op(A)[b0.., m0.., k0..] op(B)[b0.., k0.., n0..]:
// a row block moves A by m0 rows of op(A) and C by m0 rows, a column block moves B and C by n0 columns, a
// batch range moves every operand by b0 strides, and a K chunk moves A and B by k0; every K chunk after
// the first adds to C (beta = 1), so the caller's beta is applied exactly once.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace vkgemm::detail {

// The device's limits as the partition honours them.
struct PartitionLimits {
  std::array<uint32_t, 3> max_groups{};  // maxComputeWorkGroupCount
  uint64_t max_range = 0;                // maxStorageBufferRange, bytes
  uint64_t offset_alignment = 1;         // minStorageBufferOffsetAlignment, bytes
  uint32_t max_k = 0;                    // the longest K chunk, 0 for no bound (GemmOptions::max_k_per_submission)
  std::string device;                    // for the error message
};

// How the planned kernel covers C with workgroups, which sets how large a piece's grid is.
struct Blocking {
  uint32_t rows = 1, cols = 1;             // the C block one main-pass workgroup computes
  uint32_t z_per_entry = 1;                // main-pass z workgroups per batch entry (the split-K slices)
  uint32_t reduce_rows = 0, reduce_cols = 0;  // the split-K reduce pass's block; 0 when there is none
  uint32_t workspace_element_size = 0;     // bytes of a workspace sum (KernelLaunch's); 0: C's
  bool adds_slices = false;                // the main pass adds its slices (KernelLaunch::adds_slices): the
                                           // workspace holds them and one counter a workgroup, no reduce pass
  uint32_t k_step = 1;                     // K chunks are cut at multiples of this (the kernel's K step)
};

// The whole product after the column-major turn; strides and leading dimensions in elements, each
// operand's start in bytes from the start of its buffer.
struct WholeProduct {
  uint64_t element_size = 4;    // of A and B
  uint64_t c_element_size = 0;  // of C (and the split-K workspace, unless Blocking says wider); 0: element_size
  uint32_t m = 0, n = 0, k = 0, batch = 1;  // k = 0: C = beta C, A and B are not read
  uint64_t lda = 0, ldb = 0, ldc = 0;
  uint64_t stride_a = 0, stride_b = 0, stride_c = 0;
  bool trans_a = false, trans_b = false;  // A stored k x m, B stored n x k
  uint64_t a_start = 0, b_start = 0, c_start = 0;
};

// A descriptor range: from `offset` (aligned) for `size` bytes, the piece's first element
// `element_offset` elements in.
struct PieceBinding {
  uint64_t offset = 0, size = 0;
  uint32_t element_offset = 0;
};

struct Piece {
  uint32_t b0 = 0, m0 = 0, n0 = 0, k0 = 0;  // where it starts in the whole product
  uint32_t batch = 0, m = 0, n = 0, k = 0;  // its extent
  PieceBinding a, b, c;                     // with k = 0, a and b are c (nothing reads them)
  bool first_k = true;                      // the first K chunk of its C block: applies the caller's beta
};

// The most pieces one product may become: each costs a descriptor set (two with split-K) and a dispatch.
inline constexpr uint64_t kMaxPieces = uint64_t{1} << 20;

// The pieces, K chunks of one C block consecutive and in order (each later one adds to the earlier ones'
// result). One piece when the product fits as it is. Throws vkgemm::Error(too_large), naming the limits
// and the device, when the storage range cannot hold even one element past an unaligned start or the
// product would take more than kMaxPieces pieces.
std::vector<Piece> partition(const WholeProduct& whole, const Blocking& blocking, const PartitionLimits& limits);

}  // namespace vkgemm::detail
