// Host-memory products past the device's allocation limit, cut into blocks of C (host_blocks.hpp,
// docs/design/host-copies.md "Blocks").
#include "engine/host_blocks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "engine/epilogue_check.hpp"
#include "engine/host_panels.hpp"
#include "plan/schedule.hpp"
#include "vk/host_copies.hpp"

namespace vkgemm::detail {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The most blocks a product is cut into: a 100000^2 f64 product (80 GB a matrix) takes 4096 on a device that
// allocates 4.29 GB at once; each block is a call with its own fixed costs.
constexpr uint64_t kMaxBlocks = 65536;

// `lines` cut into `count` blocks: each block's lines, whole multiples of kPanelAlign where that many or more.
uint64_t block_lines(uint64_t lines, uint64_t count) {
  const uint64_t each = ceil_div(lines, count);
  return each >= kPanelAlign ? std::min(lines, ceil_div(each, kPanelAlign) * kPanelAlign) : each;
}

}  // namespace

Block block_of(const GemmDesc& desc, const BlockCut& cut, uint64_t i, uint64_t j, uint64_t l) {
  const uint64_t m0 = i * cut.rows, n0 = j * cut.cols, k0 = l * cut.depth;
  Block out;
  out.desc = with_explicit_lds(desc);
  out.desc.m = int64_t(std::min(cut.rows, uint64_t(desc.m) - m0));
  out.desc.n = int64_t(std::min(cut.cols, uint64_t(desc.n) - n0));
  out.desc.k = int64_t(std::min(cut.depth, uint64_t(desc.k) - k0));
  if (l > 0) out.desc.beta = 1.0;  // the sums of the K blocks before are in C
  const LineView a = line_view(desc, 'A', 'M'), b = line_view(desc, 'B', 'N');  // inner_step: along K
  out.a = m0 * a.line_step + k0 * a.inner_step;
  out.b = n0 * b.line_step + k0 * b.inner_step;
  out.c = m0 * line_view(desc, 'C', 'M').line_step + n0 * line_view(desc, 'C', 'N').line_step;
  return out;
}

char line_axis(const GemmDesc& desc, char which) {
  const bool row_major = desc.layout == Layout::row_major;
  if (which == 'A') return row_major != (desc.op_a == Op::t) ? 'M' : 'K';
  if (which == 'B') return row_major == (desc.op_b == Op::t) ? 'N' : 'K';
  return row_major ? 'M' : 'N';
}

std::optional<BlockCut> block_cut(const GemmDesc& desc, bool one_run,
                                  const std::function<bool(const GemmDesc&)>& fits) {
  if (desc.batch != 1 || !reads_ab(desc) || has_vector_operand(desc) || desc.m <= 0 || desc.n <= 0) return std::nullopt;
  const uint64_t size[3] = {uint64_t(desc.m), uint64_t(desc.n), uint64_t(desc.k)};
  BlockCut cut{size[0], size[1], size[2], 1, 1, 1};
  uint64_t* lines[3] = {&cut.rows, &cut.cols, &cut.depth};
  uint64_t* counts[3] = {&cut.row_blocks, &cut.col_blocks, &cut.k_blocks};
  const uint64_t es[3] = {element_size(desc.type), element_size(desc.type), element_size(output_type(desc))};
  for (Block first = block_of(desc, cut, 0, 0, 0); !fits(first.desc); first = block_of(desc, cut, 0, 0, 0)) {
    char largest = 'A';
    long double most = -1.0L;
    for (const char which : {'A', 'B', 'C'}) {
      const long double bytes = static_cast<long double>(operand_extent(first.desc, which).elements) * es[which - 'A'];
      if (bytes > most) most = bytes, largest = which;
    }
    const char axis = line_axis(desc, largest);
    const int x = axis == 'M' ? 0 : axis == 'N' ? 1 : 2;
    if (*lines[x] == 1) return std::nullopt;  // one line of the largest operand is past the limit
    // Operands mostly gaps (a huge ld) would need a block a line: refused rather than run as a million calls.
    if (cut.row_blocks * cut.col_blocks * cut.k_blocks * 2 > kMaxBlocks) return std::nullopt;
    if (x == 2 && !one_run) return std::nullopt;  // a repeated K block would add to C again
    *lines[x] = block_lines(size[x], *counts[x] * 2);
    *counts[x] = ceil_div(size[x], *lines[x]);
  }
  return cut;
}

std::optional<BlockCut> host_block_cut(const GemmDesc& desc, const GemmOptions& options, const DeviceInfo& device) {
  const auto fits = [&](const GemmDesc& block) {
    try {
      check_fits(block, options, device, nullptr);
      return true;
    } catch (const Error& e) {
      if (e.code() == ErrorCode::too_large) return false;
      throw;
    }
  };
  return block_cut(desc, options.warmup + options.repeat == 1, fits);
}

std::optional<GemmTiming> EngineImpl::gemm_host_blocks(const GemmDesc& desc, const HostOperands& host,
                                                       const GemmOptions& options) {
  const std::optional<BlockCut> cut = host_block_cut(desc, options, physical.info);
  if (!cut) return std::nullopt;
  const kernels::Types types = kernels::types_of(desc, options);
  const uint64_t es = element_size(types.input), ec = element_size(types.output);
  const auto at = [](const void* p, uint64_t bytes) { return static_cast<const char*>(p) + bytes; };
  GemmTiming total;
  bool landed = false;  // a block's C came back: a failure after it leaves C in part updated
  for (uint64_t b = 0; b < cut->row_blocks * cut->col_blocks * cut->k_blocks; ++b) {
    const uint64_t l = b % cut->k_blocks, j = b / cut->k_blocks % cut->col_blocks,
                   i = b / (cut->k_blocks * cut->col_blocks);  // each block of C through its K blocks in turn
    const Block block = block_of(desc, *cut, i, j, l);
    GemmTiming t;
    try {
      t = gemm_host(block.desc, at(host.a, block.a * es), at(host.b, block.b * es),
                    static_cast<char*>(host.c) + block.c * ec, nullptr, options);
    } catch (const Error& e) {
      if (landed && c_goes_in(desc)) throw HostCopies::partial_destination(e);
      throw;
    }
    if (!landed) {
      total = t;
    } else {
      for (size_t r = 0; r < std::min(total.gpu_ms.size(), t.gpu_ms.size()); ++r) total.gpu_ms[r] += t.gpu_ms[r];
      total.submit_wait_ms += t.submit_wait_ms, total.upload_ms += t.upload_ms, total.download_ms += t.download_ms;
    }
    landed = true;
  }
  total.config += fmt::format(", in {} blocks of {}x{}x{} (past maxMemoryAllocationSize)",
                              cut->row_blocks * cut->col_blocks * cut->k_blocks, cut->rows, cut->cols, cut->depth);
  return total;
}

}  // namespace vkgemm::detail
