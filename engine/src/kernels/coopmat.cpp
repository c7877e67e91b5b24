// The KHR cooperative-matrix kernel (shaders/coopmat.comp): f16, bf16, i8 and u8 inputs on subgroup-scope matrices
// (VK_KHR_cooperative_matrix), every op combination (the transposes known when the pipeline is built). Its device checks and its tile, fragment and
// workgroup choice are coopmat_config.cpp's (check_matrix_kernel, coopmat_launch); this is its entry in the
// kernel table.
#include "gemm_abi.h"
#include "kernels/kernel_spec.hpp"

namespace vkgemm::kernels {
namespace {

constexpr DataType kInputs[] = {DataType::f16, DataType::bf16, DataType::i8, DataType::u8};

LaunchShape shape(const LaunchContext& ctx, uint32_t m, uint32_t n) {
  LaunchShape s = coopmat_launch(ctx.device, ctx.types, ctx.options, m, n);
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

KernelLaunch launch(const LaunchContext& ctx, const Problem& p) {
  LaunchShape main = shape(ctx, p.m, p.n);
  main.constants.push_back({"TRANS_A", p.trans_a ? 1u : 0u});
  main.constants.push_back({"TRANS_B", p.trans_b ? 1u : 0u});
  return matrix_plan(ctx, p, main);
}

}  // namespace

const KernelSpec coopmat_spec{
    .kernel = Kernel::coopmat,
    .name = "coopmat",
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
