// Copies beside the products: the rule that cuts a host-memory product into panels along C's contiguous
// lines (rows of row-major C, columns of column-major C), so that a panel's upload, the panel before's product
// and the one before that's download run at once on their own queues. The rule and why:
// docs/design/host-copies.md ("Panels"); the run: EngineImpl::gemm_host_panels (host_panels.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include <volk.h>

#include "vkgemm/blas.hpp"
#include "vkgemm/options.hpp"

namespace vkgemm::detail {

struct PanelCut {
  char axis = 0;       // 'M': panels of C's rows (and op(A)'s); 'N': of C's columns (and op(B)'s); 0: not cut
  uint64_t lines = 0;  // rows or columns a panel (the last may have fewer)
  uint64_t count = 0;  // panels, at least 2 where cut
};

// Panels are made of whole tiles of the largest tile side and hold enough outputs each that the product keeps
// its kernel and fills a large GPU (8M outputs: 128 tiles of 256 x 256), at most kMaxPanels of them; a product
// with fewer than two panels' outputs is not cut (its copies are a few milliseconds at most).
inline constexpr uint64_t kPanelAlign = 256;
inline constexpr uint64_t kPanelMinOutputs = 8ull << 20;
inline constexpr uint64_t kMaxPanels = 8;

// How `desc` is cut, or not (count 0): one product (batch 1, one timed run, not cut into K chunks: `k_chunked`)
// that reads A and B and has no epilogue vector along the cut. `bus`: host copies cross a bus here (the
// storage is not host-mapped): the copies go imported or staged. `forced`: the testing knob's lines
// (VKGEMM_TEST_HOST_PANELS; 0: none), which cuts whatever the size and the bus, or HostCopyKnobs::kNoPanels,
// which never cuts.
PanelCut panel_cut(const GemmDesc& desc, const GemmOptions& options, bool k_chunked, bool bus, uint64_t forced);

// `desc` with the leading dimensions in effect given explicitly: a part of the product (a panel, a block) keeps
// the call's, which its own smaller shape would not resolve to.
GemmDesc with_explicit_lds(const GemmDesc& desc);

// Where one operand's lines lie in storage: element i of line r at r * line_step + i * inner_step (elements),
// i < inner. Lines are contiguous where inner_step is 1.
struct LineView {
  uint64_t line_step = 0, inner_step = 0, inner = 0;
};
// `which` ('A', 'B' or 'C') of `desc` seen along `axis`: op(A)'s rows for 'M', op(B)'s columns for 'N', and
// C's rows or columns.
LineView line_view(const GemmDesc& desc, char which, char axis);
// The copies of lines [r0, r1) of `v` (elements of `element_size` bytes) between a host range, `shift` bytes
// into an imported buffer, and the device buffer at the same offsets: one region where the lines are
// contiguous (the gaps between them too), else one per inner index. `to_host`: device to host.
std::vector<VkBufferCopy> line_copies(const LineView& v, uint64_t r0, uint64_t r1, uint64_t element_size,
                                      uint64_t shift, bool to_host);

}  // namespace vkgemm::detail
