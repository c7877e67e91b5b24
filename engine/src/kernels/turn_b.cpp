// The turn of an 8-bit B (shaders/turn_b8.comp): before an i8 or u8 product on a cooperative-matrix kernel
// whose op(B) is B itself (K x N, N contiguous), B is copied N x K into the workspace and the product reads
// op(B) = W^T, K contiguous: the order an int8 fragment of B is made of. Loading a B fragment from a
// row-major int8 tile needs a byte transpose per load (the 16-bit types have a transposing load; 8-bit ones
// do not). The copy moves 2·K·N bytes against the product's 2·M·N·K operations, so it pays from a few
// hundred rows of C on: kTurnMinRows (the measurements behind it: docs/design/coopmat2.md#int8).
#include <algorithm>
#include <cstdint>

#include "gemm_abi.h"
#include "kernels/registry.hpp"

namespace vkgemm::kernels {
namespace {

constexpr uint32_t kSide = GEMM_TURN_SIDE;          // the shader's block of bytes per workgroup
constexpr uint32_t kRowAlign = GEMM_TURN_ROW_ALIGN;  // the workspace's rows, for the kernels' 16-byte loads
constexpr uint32_t kTurnMinRows = 256;
static_assert(kSide / 4 * (kSide / 16) == GEMM_TURN_INVOCATIONS, "an invocation turns 4 x 16 bytes of a block");
static_assert(kSide % kRowAlign == 0, "a block's rows are whole 16-byte units of the workspace's rows");

uint32_t turned_ld(uint32_t k) { return (k + kRowAlign - 1) / kRowAlign * kRowAlign; }

// Batch entries of the workspace: one when every entry shares B (stride 0).
uint32_t turned_entries(const Problem& p) { return p.stride_b == 0 ? 1 : p.batch; }

uint64_t turned_bytes(const Problem& p) { return uint64_t{turned_entries(p)} * p.n * turned_ld(p.k); }

uint32_t blocks(uint64_t extent) { return static_cast<uint32_t>((extent + kSide - 1) / kSide); }

}  // namespace

bool turns_b(const KernelLaunch& whole, const Problem& p, const DeviceInfo& device) {
  const bool eight_bit = p.types.input == DataType::i8 || p.types.input == DataType::u8;
  if (!eight_bit || !is_matrix_kernel(whole.kernel) || whole.splits > 1 || p.trans_b || p.k == 0 ||
      p.m < kTurnMinRows) {
    return false;
  }
  // The workspace is one binding, addressed in 32-bit bytes; the turn's grid within the device's.
  const uint64_t bytes = turned_bytes(p);
  const auto& groups = device.max_workgroup_count;
  return p.k <= UINT32_MAX - kRowAlign && bytes <= std::min<uint64_t>(device.max_storage_buffer_range, UINT32_MAX) &&
         blocks(p.n) <= groups[0] && blocks(turned_ld(p.k)) <= groups[1] && turned_entries(p) <= groups[2];
}

Problem turned_b(const Problem& p) {
  Problem t = p;
  t.trans_b = true;
  t.ldb = turned_ld(p.k);
  t.b_offset = 0;
  t.stride_b = p.stride_b == 0 ? 0 : p.n * t.ldb;
  return t;
}

TurnB turn_b_pass(const Problem& p) {
  TurnB out;
  out.shape.shader = "turn_b8_u8";  // bits moved: the u8 variant serves i8
  out.shape.workgroup_size = {GEMM_TURN_INVOCATIONS, 1, 1};
  out.grid = {blocks(p.n), blocks(turned_ld(p.k)), turned_entries(p)};
  out.workspace_bytes = turned_bytes(p);
  return out;
}

}  // namespace vkgemm::kernels
