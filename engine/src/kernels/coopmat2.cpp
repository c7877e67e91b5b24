// The NV cooperative-matrix-2 kernel (shaders/coopmat2.comp): f16, bf16, i8 and u8 inputs on workgroup-scope
// matrices (VK_NV_cooperative_matrix2), transposed operands through tensor views, and, for f16 and bf16,
// split-K through an fp32 workspace for short grids with a long K (i8 and u8 run one slice: their sums are
// exact integers, and a split would need an integer workspace and reduce pass of its own). A bf16 C with
// beta 0 in one slice is stored by the kernel itself (the sums rounded per element, then converted into an A
// matrix of C's size, since devices list bf16 only as A and B, and that matrix cannot be read back for
// beta); with beta it goes through the workspace, one slice or more, and the reduce pass rounds the fp32
// sums into C. The tile choice and split count are coopmat_config.cpp's (coopmat2_launch, coopmat2_splits,
// coopmat2_splittable); auto's first choice for f16, bf16 (with C bf16 where coopmat2_first_for_bf16_c says
// so), i8 and u8 where the device has it.
#include <fmt/format.h>

#include "gemm_abi.h"
#include "kernels/kernel_spec.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

constexpr DataType kInputs[] = {DataType::f16, DataType::bf16, DataType::i8, DataType::u8};

// The variant that writes fp32 sums: a split's main pass, and a bf16 C's with beta (through the workspace).
std::string fp32_sums_shader(const Types& t) {
  return shader_name(Kernel::coopmat2, {t.input, DataType::f32, t.f16_accumulate});
}
std::string main_shader(const Types& t) { return shader_name(Kernel::coopmat2, t); }
const Types kBf16C{DataType::bf16, DataType::bf16, false};

LaunchShape shape(const LaunchContext& ctx, uint32_t m, uint32_t n, uint32_t k, uint32_t batch) {
  LaunchShape s = coopmat2_launch(ctx.device, ctx.types, ctx.options, m, n, k, batch);
  s.shader = main_shader(ctx.types);
  return s;
}

KernelLaunch launch(const LaunchContext& ctx, const Problem& p);

std::vector<GemmOptions> candidates(const LaunchContext& ctx, const Problem& p) {
  std::vector<GemmOptions> out = matrix_candidates(ctx, p, Kernel::coopmat2);
  if (ctx.types.output == DataType::bf16 && !out.empty()) {
    try {
      const KernelLaunch l = launch({ctx.device, ctx.table, out.front(), ctx.types}, p);
      if (!coopmat2_first_for_bf16_c(l.main, l.splits, l.through_workspace(), p.trans_b, p.k)) return {};
    } catch (const Error&) {
      return {};  // a device without coopmat2's shapes: check() refuses it, naming what is missing
    }
  }
  return out;
}

// The largest tile the options allow fits wherever a smaller one does.
void check(const LaunchContext& ctx) {
  LaunchShape s = coopmat2_largest_launch(ctx.device, ctx.types, ctx.options);
  s.shader = main_shader(ctx.types);
  check_matrix(ctx, s);
}

KernelLaunch launch(const LaunchContext& ctx, const Problem& p) {
  LaunchShape main = shape(ctx, p.m, p.n, p.k, p.batch);
  main.constants.push_back({"TRANS_A", p.trans_a ? 1u : 0u});
  main.constants.push_back({"TRANS_B", p.trans_b ? 1u : 0u});
  KernelLaunch out = matrix_plan(ctx, p, main);
  const bool splittable = coopmat2_splittable(ctx.types);
  const uint32_t wanted = p.k == 0 || !splittable ? 1
                          : p.splits             ? p.splits
                                                 : coopmat2_splits(out.main, p.m, p.n, p.k, p.batch);
  if (wanted > 1) {
    // Slices of a multiple of 256 (whole K steps, and the K start of the shader's fast path); the main pass
    // writes fp32 partial sums (the variant of its accumulator with C f32), the reduce pass (workspace f32,
    // C of the caller's type) adds them with alpha and beta.
    constexpr uint32_t kSliceAlign = 256;
    const uint32_t rounds = (p.k + kSliceAlign - 1) / kSliceAlign;
    out.k_split = ((rounds + wanted - 1) / wanted) * kSliceAlign;
    out.splits = (p.k + out.k_split - 1) / out.k_split;
  }
  // A bf16 C read for beta goes through the workspace: the kernel's own bf16 store cannot read C (coopmat2.comp).
  const bool bf16_c = ctx.types.output == DataType::bf16 && !p.beta_zero;
  if (out.splits > 1 || bf16_c) {
    out.main.shader = fp32_sums_shader(ctx.types);
    out.grid[2] = p.batch * out.splits;
    add_reduce(out, fp32_sums_reduce(ctx.types), p.m, p.n, p.batch, kFp32SumBytes);  // fp32 sums, whatever C's type
    if (out.splits > 1) out.description += fmt::format(" split {}", out.splits);
    if (ctx.types.output == DataType::bf16) out.description += ", C through fp32";
  }
  return out;
}

// Pinned as matrix_pin pins, the tile named as coopmat2_launch names it (coopmat2_tile_option), not by its
// columns: 192 x 128 would come back 128 x 128, 32 x 64 as 64 x 64. A bf16 C the main pass stores (beta 0)
// still goes through the workspace in a K bound's later chunks (beta 1): the pieces are cut with room for it.
Pinning pin(const KernelLaunch& whole, const DeviceInfo& device, const GemmOptions& options) {
  KernelLaunch cut = whole;
  if (!whole.through_workspace() && whole.main.shader == main_shader(kBf16C)) {
    add_reduce(cut, fp32_sums_reduce(kBf16C), 0, 0, 1, kFp32SumBytes);
  }
  Pinning out = matrix_pin(cut, device, options);
  out.options.tile = coopmat2_tile_option(whole.main.tile[1], whole.main.tile[0]);
  return out;
}

}  // namespace

const KernelSpec coopmat2_spec{
    .kernel = Kernel::coopmat2,
    .inputs = kInputs,
    .computes = "multiplies f16, bf16, i8 and u8 matrices",
    .reads_transposed = true,
    .auto_fallback = false,
    .from_tuning = nullptr,
    .auto_candidates = candidates,
    .check = check,
    .launch = launch,
    .pin = pin,
};

}  // namespace vkgemm::kernels
