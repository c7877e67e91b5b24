#include "kernels/square_choice.hpp"

#include "kernels/blocked_choice.hpp"
#include "tuning/wave_model.hpp"

namespace vkgemm::kernels {
namespace {

// A square kernel must promise to finish in this fraction of the blocked kernel's estimate to be taken (the
// model is an estimate; blocked is the measured kernel where both are close).
constexpr double kSquareMargin = 0.8;

// A square configuration as the model sees it: its flops run at `rate` times the blocked kernel's unit
// rate, and each workgroup costs `k_overhead` K steps besides its sum (its launch, the first loads, the
// store). `cpu`: a configuration for CPU devices, else for GPUs.
//  - CPU (measured on lavapipe, 2 threads, docs/tuning.md "Small and batched products"): naive 16 was the
//    fastest or within the noise of it from 8^3 to 64^3 at every batch; tiled paid for its barriers (8^3 x
//    4096: 703 ms against naive's 55). A naive 16 workgroup took about 2.7 us per step of K where a blocked
//    256x256 one took 4.5 to 10 ms whatever its K (the blocked kernel's CPU fixed cost, blocked_choice.cpp):
//    naive wins below about 90^3 whatever the batch.
//  - GPU: unmeasured for batches of tiny products; a rate so low that only products whose blocked tiles are
//    nearly all padding (8^3 to 16^3 in large batches) leave the blocked kernel, and every published H200
//    row keeps its measured plan (the blocked choice suite checks them).
struct Square {
  bool cpu;
  Kernel kernel;
  uint32_t tile;
  double rate;
  uint32_t k_overhead;
};
constexpr Square kSquares[] = {
    {true, Kernel::naive, 16, 0.0008, 4},
    {false, Kernel::tiled, 16, 1.0 / 32, 16},
    {false, Kernel::tiled, 8, 1.0 / 32, 8},
};

}  // namespace

std::optional<GemmOptions> square_instead_of_blocked(const LaunchContext& ctx, const Problem& p) {
  const DataType type = ctx.types.input;
  if ((type != DataType::f32 && type != DataType::f64) || p.k == 0) return std::nullopt;
  const BlockedChoice blocked = choose_blocked(ctx.device, ctx.table, ctx.options, type,
                                               {p.m, p.n, p.k, p.batch, p.trans_a, p.trans_b});
  if (blocked.model_seconds <= 0.0) return std::nullopt;  // measured at this shape, or the caller's
  const tuning::Machine machine = tuning::machine_of(ctx.device);
  const tuning::Work work{p.m, p.n, p.k, p.batch};
  double best = blocked.model_seconds * kSquareMargin;
  std::optional<GemmOptions> out;
  for (const Square& s : kSquares) {
    if (s.cpu != (ctx.device.type == DeviceType::cpu)) continue;
    const tuning::TileModel model{s.tile, s.tile, tuning::saturating_workgroups(ctx.device, s.tile * s.tile),
                                  s.k_overhead, blocked.unit_gflops * s.rate};
    const double seconds = tuning::main_seconds(machine, model, work, 1);
    if (seconds < best) {
      best = seconds;
      out = ctx.options;
      out->kernel = s.kernel, out->tile = s.tile;
    }
  }
  return out;
}

}  // namespace vkgemm::kernels
