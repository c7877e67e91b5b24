// The naive kernel (shaders/naive.comp): one invocation per element of C, a t x t workgroup. Every type,
// transposed operands; auto's very last resort.
#include "kernels/kernel_spec.hpp"

#include "gemm_abi.h"

namespace vkgemm::kernels {
namespace {

constexpr DataType kInputs[] = {DataType::f32,  DataType::i32, DataType::f64, DataType::f16,
                                DataType::bf16, DataType::i8,  DataType::u8};

std::vector<GemmOptions> candidates(const LaunchContext& ctx, const Problem&) {
  std::vector<GemmOptions> out;
  for (const uint32_t tile : {16u, 8u, 1u}) {
    GemmOptions o = ctx.options;
    o.kernel = Kernel::naive, o.tile = tile;
    out.push_back(o);
  }
  return out;
}

}  // namespace

const KernelSpec naive_spec{
    .kernel = Kernel::naive,
    .inputs = kInputs,
    .computes = "computes every type",
    .reads_transposed = true,
    .auto_fallback = true,
    .from_tuning = nullptr,
    .auto_candidates = candidates,
    .check = check_square,
    .launch = square_launch,
    .pin = square_pin,
};

}  // namespace vkgemm::kernels
