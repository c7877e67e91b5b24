// The KHR cooperative-matrix kernel (shaders/coopmat.comp): f16, bf16, i8 and u8 inputs on subgroup-scope matrices
// (VK_KHR_cooperative_matrix), every op combination (the transposes known when the pipeline is built). Its device checks and its tile, fragment and
// workgroup choice are coopmat_config.cpp's (check_matrix_kernel, coopmat_launch); this is its entry in the
// kernel table.
#include "gemm_abi.h"
#include "kernels/experiments.hpp"
#include "kernels/kernel_spec.hpp"

namespace vkgemm::kernels {
namespace {

constexpr DataType kInputs[] = {DataType::f16, DataType::bf16, DataType::i8, DataType::u8};

LaunchShape shape(const LaunchContext& ctx, const Problem& p) {
  LaunchShape s = coopmat_launch(ctx.device, ctx.types, ctx.options, p.m, p.n, p.k, p.batch);
  s.shader = shader_name(Kernel::coopmat, ctx.types);
  return s;
}

std::vector<GemmOptions> candidates(const LaunchContext& ctx, const Problem& p) {
  return matrix_candidates(ctx, p, Kernel::coopmat);
}

// The largest tile the options allow fits wherever a smaller one does.
void check(const LaunchContext& ctx) {
  LaunchShape s = coopmat_largest_launch(ctx.device, ctx.types, ctx.options);
  s.shader = shader_name(Kernel::coopmat, ctx.types);
  check_matrix(ctx, s);
}

// Whether the shader's fast path covers the whole product (its WHOLE constant): every workgroup tile inside C,
// every K step whole, A and B in 16-byte units (rows, offsets and batch strides), C stored straight from the
// accumulators (beta 0, rows, offset and batch stride in 8 elements; a bf16 C through the staging area 16
// bytes at a time). The experiment knob's whole=0 turns it off.
bool whole_product(const LaunchShape& s, const Problem& p) {
  if (khr_experiment().whole == 0) return false;
  uint32_t bk = 0;
  for (const SpecConstant& c : s.constants) bk = c.name == "BK" ? c.value : bk;
  const auto unit = static_cast<uint32_t>(16 / element_size(p.types.input));  // elements in 16 bytes
  const bool batched = p.batch > 1;
  const auto in_units = [&](uint32_t ld, uint32_t offset, uint32_t stride, uint32_t u) {
    return ld % u == 0 && offset % u == 0 && (!batched || stride % u == 0);
  };
  return p.beta_zero && p.k > 0 && bk > 0 && p.k % bk == 0 && p.m % s.tile[1] == 0 && p.n % s.tile[0] == 0 &&
         in_units(p.lda, p.a_offset, p.stride_a, unit) && in_units(p.ldb, p.b_offset, p.stride_b, unit) &&
         in_units(p.ldc, p.c_offset, p.stride_c, 8);
}

KernelLaunch launch(const LaunchContext& ctx, const Problem& p) {
  LaunchShape main = shape(ctx, p);
  main.constants.push_back({"TRANS_A", p.trans_a ? 1u : 0u});
  main.constants.push_back({"TRANS_B", p.trans_b ? 1u : 0u});
  main.constants.push_back({"WHOLE", whole_product(main, p) ? 1u : 0u});
  return matrix_plan(ctx, p, main);
}

}  // namespace

const KernelSpec coopmat_spec{
    .kernel = Kernel::coopmat,
    .inputs = kInputs,
    .computes = "multiplies f16, bf16, i8 and u8 matrices",
    .reads_transposed = true,
    .auto_fallback = false,
    .from_tuning = nullptr,
    .auto_candidates = candidates,
    .check = check,
    .launch = launch,
    .pin = matrix_pin,
};

}  // namespace vkgemm::kernels
