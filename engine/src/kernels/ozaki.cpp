// The emulated f64 and f32 product (Ozaki scheme II: docs/design/ozaki.md): its spec. The product itself is
// not one kernel's launch but a sequence — the split of each operand into int8 residue planes, the engine's
// own int8 product of every plane, the merge into C, and the native kernel's dispatches armed for inputs the
// moduli cannot cover — which the schedule builds (plan/emulated_schedule.cpp). Here: what it computes,
// what the device must have, and when auto takes it (GemmOptions::precision emulated, int8 matrix units).
#include <cmath>

#include <fmt/format.h>

#include "kernels/kernel_spec.hpp"
#include "ozaki/moduli.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

constexpr DataType kInputs[] = {DataType::f64, DataType::f32};

// Whether the device multiplies int8 matrices in its matrix units (coopmat2 or coopmat, i8 -> i32).
bool int8_matrix_units(const DeviceInfo& device) {
  for (const Kernel kernel : {Kernel::coopmat2, Kernel::coopmat}) {
    try {
      check_matrix_kernel(device, kernel, Types(DataType::i8));
      return true;
    } catch (const Error&) {
    }
  }
  return false;
}

void check(const LaunchContext& ctx) {
  const uint32_t moduli = ctx.options.emulation_moduli;
  if (moduli != 0 && (moduli < ozaki::kMinModuli || moduli > ozaki::kMaxModuli)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the ozaki kernel takes {} to {} moduli (GemmOptions::emulation_moduli), not {}",
                            ozaki::kMinModuli, ozaki::kMaxModuli, moduli));
  }
  if (!ctx.device.float64) {
    throw Error(ErrorCode::unsupported_type,
                fmt::format("the ozaki kernel rebuilds its products in f64 (shaderFloat64), which {} does not have; "
                            "the blocked or tiled kernel computes {} there",
                            ctx.device.name, to_string(ctx.types.input)));
  }
  if (!missing_feature(ctx.device, DataType::i8).empty()) {
    throw Error(ErrorCode::unsupported_type,
                fmt::format("the ozaki kernel's int8 planes need {} ({}), which {} does not have",
                            missing_feature(ctx.device, DataType::i8), "8-bit storage", ctx.device.name));
  }
}

// auto takes the emulation only where the device's measured cost model (tuning::EmulationCost, in its tuning
// table) predicts it at least kAutoGain times faster than the native kernel: the margin covers the model's
// misses on the products it was fitted to (docs/design/ozaki.md, "Choosing it"). A device without a model never
// emulates by itself.
constexpr double kAutoGain = 1.1;

// The emulated product's predicted time over the native kernel's, by the device's cost model.
double predicted_gain(const tuning::EmulationCost& cost, const LaunchContext& ctx, const Problem& problem) {
  const double m = problem.m, n = problem.n, k = problem.k, batch = problem.batch;
  const uint32_t moduli = ctx.options.emulation_moduli ? ctx.options.emulation_moduli
                                                       : ozaki::default_moduli(ctx.types.input, problem.k);
  // The int8 products' tiles (coopmat2's 128 x 256) cover C in whole tiles; the split writes a residue an element
  // a modulus, the merge reads one. The span guard's magnitude product runs only where the lines' levels do not
  // decide (not on the data the model is fitted to), so the products are the moduli's.
  const double waste = std::ceil(m / 128) * 128 * std::ceil(n / 256) * 256 / (m * n);
  const double flops = 2 * m * n * k * batch;
  const double emulated = moduli * flops * waste / cost.int8_ops +
                          1e-9 * cost.split_ns * (m * k + k * n) * batch * moduli +
                          1e-9 * cost.merge_ns * m * n * batch * moduli + 1e-6 * cost.fixed_us;
  double native_gflops = ctx.types.input == DataType::f64 ? cost.f64_gflops : cost.f32_gflops;
  if (const auto entry = ctx.table.lookup(ctx.device, ctx.types.input, problem.m, problem.n, problem.k);
      entry && entry->gflops > 0.0 && batch == 1) {
    native_gflops = entry->gflops;
  }
  return flops / (native_gflops * 1e9) / emulated;
}

std::vector<GemmOptions> candidates(const LaunchContext& ctx, const Problem& problem) {
  if (ctx.options.precision != Precision::emulated || problem.k == 0 || !ctx.device.float64 ||
      !int8_matrix_units(ctx.device)) {
    return {};
  }
  const tuning::DeviceTable* table = ctx.table.find(ctx.device).first;
  if (!table || !table->emulation || predicted_gain(*table->emulation, ctx, problem) < kAutoGain) return {};
  GemmOptions o = ctx.options;
  o.kernel = Kernel::ozaki;
  return {o};
}

KernelLaunch launch(const LaunchContext& ctx, const Problem& problem) {
  KernelLaunch out;
  out.kernel = Kernel::ozaki;
  const uint32_t moduli = ctx.options.emulation_moduli ? ctx.options.emulation_moduli
                                                       : ozaki::default_moduli(ctx.types.input, problem.k);
  out.description = fmt::format("{} moduli", moduli);
  return out;
}

Pinning pin(const KernelLaunch&, const DeviceInfo&, const GemmOptions& options) {
  Pinning p;
  p.options = options;
  p.options.kernel = Kernel::ozaki;
  return p;
}

}  // namespace

const KernelSpec ozaki_spec{
    .kernel = Kernel::ozaki,
    .inputs = kInputs,
    .computes = "computes f64 and f32 (emulated through exact int8 products)",
    .reads_transposed = true,
    .auto_fallback = false,
    .from_tuning = nullptr,
    .auto_candidates = candidates,
    .check = check,
    .launch = launch,
    .pin = pin,
};

}  // namespace vkgemm::kernels
