// The tiled kernel (shaders/tiled.comp): square shared-memory tiles of t x t.
// Every type, transposed operands. auto takes it where the tuning table says so, and after blocked (which
// the f16, i32 and transposed products skip) at the largest tile that fits.
#include "kernels/kernel_spec.hpp"

#include "gemm_abi.h"

namespace vkgemm::kernels {
namespace {

constexpr DataType kInputs[] = {DataType::f32,  DataType::i32, DataType::f64, DataType::f16,
                                DataType::bf16, DataType::i8,  DataType::u8};

GemmOptions with_tile(const GemmOptions& options, uint32_t tile) {
  GemmOptions o = options;
  o.kernel = Kernel::tiled, o.tile = tile;
  return o;
}

std::optional<GemmOptions> from_tuning(const LaunchContext& ctx, const tuning::Entry& entry) {
  return with_tile(ctx.options, entry.tile);
}

std::vector<GemmOptions> candidates(const LaunchContext& ctx, const Problem&) {
  return {with_tile(ctx.options, 16), with_tile(ctx.options, 8), with_tile(ctx.options, 4)};
}

}  // namespace

const KernelSpec tiled_spec{
    .kernel = Kernel::tiled,
    .inputs = kInputs,
    .computes = "computes every type",
    .reads_transposed = true,
    .auto_fallback = true,
    .from_tuning = from_tuning,
    .auto_candidates = candidates,
    .check = check_square,
    .launch = square_launch,
    .pin = square_pin,
};

}  // namespace vkgemm::kernels
