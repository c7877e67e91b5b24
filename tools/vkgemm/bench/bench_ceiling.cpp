#include "bench_ceiling.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

namespace vkgemm::cli::bench {
namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

std::optional<Ceiling> named(const Settings& settings, std::string_view name) {
  for (const Ceiling& c : settings.ceilings) {
    if (c.name == name) return c;
  }
  return std::nullopt;
}

// The fastest measured cooperative-matrix shape of these types ("f16*f16+f32", "i8*i8+i32", ...).
std::optional<Ceiling> best_mma(const Settings& settings, std::string_view tail) {
  std::optional<Ceiling> best;
  for (const Ceiling& c : settings.ceilings) {
    if (c.name.rfind("coopmat ", 0) != 0 || !ends_with(c.name, tail)) continue;
    if (!best || c.gflops > best->gflops) best = c;
  }
  return best;
}

// The emulated row of f64 or f32 at `moduli` int8 products (0: the default's, as the row was derived).
std::optional<Ceiling> emulated(const Settings& settings, DataType type, uint32_t moduli) {
  std::optional<Ceiling> row = named(settings, type == DataType::f64 ? "f64 emulated (ozaki)" : "f32 emulated (ozaki)");
  if (row && moduli != 0 && row->int8_products != 0 && moduli != row->int8_products) {
    row->gflops *= double(row->int8_products) / moduli;
    row->name += fmt::format(" at {} moduli", moduli);
    row->int8_products = moduli;
  }
  return row;
}

}  // namespace

std::vector<Ceiling> ceilings_from(const std::vector<PeakMeasurement>& rows) {
  std::vector<Ceiling> out;
  for (const PeakMeasurement& m : rows) {
    const bool rate = m.unit == "TFLOP/s" || m.unit == "TOP/s";
    const bool derived = !m.derived_from.empty() && m.products != 0;  // the emulated rows
    if ((m.measured || derived) && rate && m.value > 0.0) out.push_back({m.name, m.value * 1e3, m.products});
  }
  return out;
}

std::optional<Ceiling> ceiling_for(const Settings& settings, DataType type, Kernel kernel, bool f16_accumulate,
                                   uint32_t moduli) {
  if (kernel == Kernel::ozaki && (type == DataType::f64 || type == DataType::f32)) {
    return emulated(settings, type, moduli);
  }
  if (type == DataType::f32) {
    if (settings.peak_gflops) return Ceiling{"--peak-gflops", *settings.peak_gflops};
    return named(settings, "f32 FMA");
  }
  if (type == DataType::f64) return named(settings, "f64 FMA");
  const bool matrix = kernel == Kernel::coopmat || kernel == Kernel::coopmat2;
  // i8 and u8 on the matrix kernels: the shapes they run on (u8 sums in u32). On the tiled kernel: packed dot
  // products, which it runs exactly where vkgemm peak measures them (the device's shaderIntegerDotProduct,
  // the build's GL_EXT_integer_dot_product); naive's plain integer arithmetic has no measured ceiling.
  if (type == DataType::i8 || type == DataType::u8) {
    if (kernel == Kernel::tiled) return named(settings, "int8 dot product (packed)");
    return matrix ? best_mma(settings, type == DataType::i8 ? "i8*i8+i32" : "u8*u8+u32") : std::nullopt;
  }
  // bf16 (fp32 sums): on the matrix kernels the bf16 shapes; on the others, whose sums are f32 FMAs, f32 FMA.
  if (type == DataType::bf16) return matrix ? best_mma(settings, "bf16*bf16+f32") : named(settings, "f32 FMA");
  if (type != DataType::f16) return std::nullopt;
  if (matrix) return best_mma(settings, f16_accumulate ? "f16*f16+f16" : "f16*f16+f32");
  return named(settings, f16_accumulate ? "f16 FMA (packed)" : "f32 FMA");
}

double bytes_moved(const GemmDesc& desc) {
  const double in = double(element_size(desc.type)), out = double(element_size(output_type(desc)));
  const double batch = double(desc.batch), m = double(desc.m), n = double(desc.n), k = double(desc.k);
  const auto entries = [&](const std::optional<int64_t>& stride) { return stride && *stride == 0 ? 1.0 : batch; };
  const bool reads_ab = desc.alpha != 0.0 && desc.k != 0;
  const double a = reads_ab ? in * m * k * entries(desc.stride_a) : 0.0;
  const double b = reads_ab ? in * k * n * entries(desc.stride_b) : 0.0;
  const double c = out * m * n * batch * (desc.beta != 0.0 ? 2.0 : 1.0);
  return a + b + c;
}

std::optional<double> copy_rate(const std::vector<PeakMeasurement>& rows) {
  for (const PeakMeasurement& m : rows) {
    if (m.name == "copy" && m.measured && m.unit == "GB/s" && m.value > 0.0) return m.value;
  }
  return std::nullopt;
}

std::optional<Roofline> roofline_for(const std::optional<Ceiling>& compute, std::optional<double> copy_gbps,
                                     double operations, double bytes) {
  if (!copy_gbps || bytes <= 0.0 || operations <= 0.0) return std::nullopt;
  Roofline r;
  r.bytes = bytes;
  r.memory_gflops = operations * *copy_gbps / bytes;  // operations / (bytes / (GB/s * 1e9)) / 1e9
  r.memory_bound = !compute || r.memory_gflops < compute->gflops;
  r.gflops = r.memory_bound ? r.memory_gflops : compute->gflops;
  return r;
}

}  // namespace vkgemm::cli::bench
