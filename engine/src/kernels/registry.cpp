// The kernel registry: the table of kernel specs (one file per kernel family), the checks every kernel
// shares, and plan(), a loop over the table.
#include "kernels/registry.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "gemm_abi.h"
#include "kernels/check_count.hpp"
#include "kernels/kernel_spec.hpp"
#include "kernels/spirv_table.hpp"
#include "kernels/square_choice.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

// The features the narrow types' storage needs (the shaders widen each element as they load it, so no
// 16-bit or 8-bit arithmetic: the SPIR-V declares only the storage capabilities).
void check_storage(const DeviceInfo& device, DataType in) {
  const std::string_view feature = missing_feature(device, in);
  if (feature.empty()) return;
  if (in == DataType::f64) {
    throw Error(ErrorCode::unsupported_type,
                fmt::format("f64 needs the shaderFloat64 feature, which {} does not have", device.name));
  }
  throw Error(ErrorCode::unsupported_type,
              fmt::format("{} needs the {} feature ({}), which {} does not have; use f32 inputs on this device",
                          to_string(in), feature,
                          in == DataType::bf16 ? "bf16 is read as 16-bit words" : "8-bit integers are read from 8-bit storage",
                          device.name));
}

// The types themselves, whatever the kernel: which combinations exist and what the device must have.
void check_types(const DeviceInfo& device, const Types& types) {
  const DataType in = types.input, out = types.output;
  if (in == DataType::f16) {
    if (out != DataType::f32 && out != DataType::f16) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("f16 inputs give C of f32 or f16, not {}", to_string(out)));
    }
    if (types.f16_accumulate && out != DataType::f16) {
      throw Error(ErrorCode::invalid_argument,
                  "f16 accumulation gives C of f16; ask for C f16 (GemmDesc::c_type, or Engine::gemm's output type) "
                  "or turn off GemmOptions::f16_accumulate");
    }
    if (!device.float16 || !device.storage16) {
      throw Error(ErrorCode::unsupported_type,
                  fmt::format("f16 needs the shaderFloat16 and storageBuffer16BitAccess features; {} has {}", device.name,
                              device.float16 ? "only shaderFloat16"
                                             : device.storage16 ? "only storageBuffer16BitAccess" : "neither"));
    }
    return;
  }
  if (types.f16_accumulate) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("f16 accumulation is for f16 inputs, not {}", to_string(in)));
  }
  const bool int8 = in == DataType::i8 || in == DataType::u8;
  if (!output_allowed(in, out)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} inputs give C of {}{}, not {}{}", to_string(in), to_string(default_output_type(in)),
                            in == DataType::bf16 ? " or bf16" : "", to_string(out),
                            int8 ? " (or f32 and f16: dequantized, GemmDesc::epilogue.scale)" : ""));
  }
  check_storage(device, in);
  if (int8 && out == DataType::f16 && !device.storage16) {  // the dequantized C is stored as 16-bit words
    throw Error(ErrorCode::unsupported_type,
                fmt::format("{} into f16 C needs the storageBuffer16BitAccess feature, which {} does not have; ask "
                            "for C f32", to_string(in), device.name));
  }
}

bool computes(const KernelSpec& spec, DataType type) {
  return std::find(spec.inputs.begin(), spec.inputs.end(), type) != spec.inputs.end();
}

// "a, b or c": the kernels that compute `type` (and read transposed operands, if asked), then auto.
std::string alternatives(DataType type, bool transposed) {
  std::string out;
  for (const KernelSpec* spec : kernel_specs()) {
    if (computes(*spec, type) && (!transposed || spec->reads_transposed)) {
      out += fmt::format("{}{}", out.empty() ? "" : ", ", to_string(spec->kernel));
    }
  }
  return out + " or auto";
}

// The caller's types with the options' f16 accumulation folded in.
Types effective(const Types& types, const GemmOptions& options) {
  Types t = types;
  t.f16_accumulate = t.f16_accumulate || options.f16_accumulate;
  return t;
}

// auto's choice: the tuning table's verdict where a spec takes it, else the first candidate of the table
// that runs. When none does, the first refusal of a fallback kernel, which names the missing feature or limit.
GemmOptions choose_automatic(const LaunchContext& ctx, const Problem& p) {
  const bool transposed = p.trans_a || p.trans_b;
  const auto runs = [&](const KernelSpec& spec, const GemmOptions& o, std::optional<Error>* refusal) {
    if (transposed && !spec.reads_transposed) return false;
    try {
      spec.check({ctx.device, ctx.table, o, ctx.types});
      return true;
    } catch (const Error& e) {
      if (refusal && !*refusal) *refusal = e;
      return false;
    }
  };
  // Emulation allowed (GemmOptions::precision) is the caller's choice over the table's native kernels.
  if (ctx.options.precision == Precision::emulated) {
    const KernelSpec& emulated = *find_spec(Kernel::ozaki);
    for (const GemmOptions& o : emulated.auto_candidates(ctx, p)) {
      if (runs(emulated, o, nullptr)) return o;
    }
  }
  // A skinny product streams its large operand (gemv.cpp's rule): the gemv kernel before any table's verdict,
  // whose entries were measured on kernels that read it more than once.
  const KernelSpec& skinny = *find_spec(Kernel::gemv);
  for (const GemmOptions& o : skinny.auto_candidates(ctx, p)) {
    if (runs(skinny, o, nullptr)) return o;
  }
  if (tuning::tuned_type(ctx.types.input)) {  // the table has no f16, bf16, i8 or u8 entries
    const auto& t = ctx.table;
    if (const auto entry = t.lookup(ctx.device, ctx.types.input, p.m, p.n, p.k, p.trans_a, p.trans_b, p.batch)) {
      const KernelSpec* spec = find_spec(entry->kernel);
      if (spec && spec->from_tuning) {
        if (const auto o = spec->from_tuning(ctx, *entry); o && runs(*spec, *o, nullptr)) return *o;
      }
    }
  }
  // A product too small for the blocked kernel's tiles (square_choice.hpp): a square kernel, where it runs.
  const std::optional<GemmOptions> square = square_instead_of_blocked(ctx, p);
  if (square && runs(*find_spec(square->kernel), *square, nullptr)) return *square;
  std::optional<Error> refusal;
  for (const KernelSpec* spec : kernel_specs()) {
    for (const GemmOptions& o : spec->auto_candidates(ctx, p)) {
      if (runs(*spec, o, spec->auto_fallback ? &refusal : nullptr)) return o;
    }
  }
  throw *refusal;
}

void check_grids(const DeviceInfo& device, const KernelLaunch& plan, const Problem& p) {
  for (const auto* grid : {&plan.grid, &plan.reduce_grid}) {
    for (size_t i = 0; i < 3; ++i) {
      if ((*grid)[i] > device.max_workgroup_count[i]) {
        throw Error(ErrorCode::too_large,
                    fmt::format("a {}x{} result needs {} workgroups along axis {}; {} allows {} "
                                "(maxComputeWorkGroupCount)",
                                p.m, p.n, (*grid)[i], i, device.name, device.max_workgroup_count[i]));
      }
    }
  }
}

}  // namespace


std::span<const KernelSpec* const> kernel_specs() noexcept {
#define VKGEMM_KERNEL_SPEC_ADDRESS(name, value) &name##_spec,
  static const KernelSpec* const specs[] = {VKGEMM_KERNELS(VKGEMM_KERNEL_SPEC_ADDRESS)};
#undef VKGEMM_KERNEL_SPEC_ADDRESS
  return specs;
}

const KernelSpec* find_spec(Kernel kernel) noexcept {
  for (const KernelSpec* spec : kernel_specs()) {
    if (spec->kernel == kernel) return spec;
  }
  return nullptr;
}

void check_types_for(const DeviceInfo& device, const KernelSpec& spec, const Types& types) {
  check_types(device, types);
  if (!computes(spec, types.input)) {
    throw Error(ErrorCode::unsupported_type,
                fmt::format("the {} kernel {}, not {}; use {} for {}", to_string(spec.kernel), spec.computes,
                            to_string(types.input), alternatives(types.input, false), to_string(types.input)));
  }
}

void check_workgroup(const DeviceInfo& device, const std::string& what, const std::array<uint32_t, 3>& wg,
                     uint32_t shared_bytes, DataType type) {
  const uint64_t invocations = uint64_t{wg[0]} * wg[1] * wg[2];
  if (invocations > device.max_workgroup_invocations) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("{} needs {} invocations per workgroup; {} allows {} (maxComputeWorkGroupInvocations)",
                            what, invocations, device.name, device.max_workgroup_invocations));
  }
  for (size_t i = 0; i < 3; ++i) {
    if (wg[i] > device.max_workgroup_size[i]) {
      throw Error(ErrorCode::unsupported_config,
                  fmt::format("{} needs a workgroup {} wide in dimension {}; {} allows {} (maxComputeWorkGroupSize)",
                              what, wg[i], i, device.name, device.max_workgroup_size[i]));
    }
  }
  if (shared_bytes > device.max_shared_memory) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("{} for {} needs {} bytes of shared memory; {} allows {} (maxComputeSharedMemorySize)",
                            what, to_string(type), shared_bytes, device.name, device.max_shared_memory));
  }
}

bool tiled_dot8(const DeviceInfo& device, Kernel kernel, const Types& types) {
  if (kernel != Kernel::tiled || (types.input != DataType::i8 && types.input != DataType::u8) || !device.integer_dot) {
    return false;
  }
  const std::string name = shader_name(kernel, types) + std::string(kDot8Suffix);
  const auto table = spirv_table();
  return std::any_of(table.begin(), table.end(), [&](const SpirvBlob& b) { return name == b.name; });
}

LaunchShape square_shape(const DeviceInfo& device, Kernel kernel, const Types& types, uint32_t t) {
  if (t == 0 || t > kMaxTile) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("tile size {} (GemmOptions::tile) is out of range (1 to {})", t, kMaxTile));
  }
  LaunchShape shape;
  shape.shader = shader_name(kernel, types) + (tiled_dot8(device, kernel, types) ? kDot8Suffix : "");
  shape.workgroup_size = {t, t, 1};
  if (kernel == Kernel::naive) {
    shape.constants = {{"WG_X", t}, {"WG_Y", t}};
  } else {
    shape.constants = {{"TILE", t}};
    // The tiles hold elements as loaded: bf16 widened to float, i8 and u8 to int (gemm_interface.glsl), or
    // four i8 or u8 to a 32-bit word (the packed dot products' form).
    const bool widened = types.input == DataType::bf16 || types.input == DataType::i8 || types.input == DataType::u8;
    shape.shared_bytes = 2u * t * t * (widened ? 4u : static_cast<uint32_t>(element_size(types.input)));
  }
  return shape;
}

void check_square(const LaunchContext& ctx) {
  const Kernel kernel = ctx.options.kernel;
  const LaunchShape s = square_shape(ctx.device, kernel, ctx.types, ctx.options.tile);
  check_workgroup(ctx.device, fmt::format("{} tile {}", to_string(kernel), ctx.options.tile), s.workgroup_size,
                  s.shared_bytes, ctx.types.input);
}

KernelLaunch square_launch(const LaunchContext& ctx, const Problem& p) {
  const uint32_t t = ctx.options.tile;
  KernelLaunch out;
  out.kernel = ctx.options.kernel;
  out.main = square_shape(ctx.device, out.kernel, ctx.types, t);
  out.grid = {(p.n + t - 1) / t, (p.m + t - 1) / t, p.batch};
  out.k_split = std::max(p.k, 1u);
  out.description = fmt::format("tile {}{}", t, out.main.shader.ends_with(kDot8Suffix) ? ", packed dot products" : "");
  return out;
}

Pinning square_pin(const KernelLaunch& whole, const DeviceInfo&, const GemmOptions& options) {
  Pinning out{options, {}, 0};
  out.options.kernel = whole.kernel;
  out.options.tile = whole.main.workgroup_size[0];
  out.blocking.rows = out.blocking.cols = out.blocking.k_step = out.options.tile;
  if (whole.main.shader.ends_with(kDot8Suffix)) out.blocking.k_step *= 4;  // four K elements a shared word
  return out;
}

std::vector<GemmOptions> matrix_candidates(const LaunchContext& ctx, const Problem& p, Kernel kernel) {
  const DataType in = ctx.types.input;
  if ((in != DataType::f16 && in != DataType::bf16 && in != DataType::i8 && in != DataType::u8) || p.k == 0) return {};
  GemmOptions o = ctx.options;
  o.kernel = kernel, o.tile = 16;
  return {o};
}

void check_matrix(const LaunchContext& ctx, const LaunchShape& shape) {
  // The shape first, so that a malformed option is named as such whatever the device; then the device
  // (lacking the extension is the usual reason); then this build (compiled without it, and why).
  const Kernel kernel = ctx.options.kernel;
  check_matrix_kernel(ctx.device, kernel, ctx.types);
  spirv(shape.shader);
  check_workgroup(ctx.device, std::string(to_string(kernel)), shape.workgroup_size, shape.shared_bytes,
                  ctx.types.input);
}

KernelLaunch matrix_plan(const LaunchContext& ctx, const Problem& p, LaunchShape main) {
  KernelLaunch out;
  out.kernel = ctx.options.kernel;
  out.main = std::move(main);
  out.grid = dispatch_grid(ctx.device, out.main, p.m, p.n);
  out.grid[2] = p.batch;
  out.k_split = std::max(p.k, 1u);
  out.description = fmt::format("{}x{}", out.main.tile[1], out.main.tile[0]);
  return out;
}

Pinning matrix_pin(const KernelLaunch& whole, const DeviceInfo&, const GemmOptions& options) {
  // Pinned to the tile chosen for the whole product (its side along N names it, as the coopmat kernel names
  // its tiles; coopmat2 names its own, coopmat2.cpp).
  Pinning out{options, {}, whole.splits};
  out.options.kernel = whole.kernel;
  out.options.tile = whole.main.tile[0];
  detail::Blocking& b = out.blocking;
  b.cols = whole.main.tile[0], b.rows = whole.main.tile[1];
  b.k_step = 64;
  b.z_per_entry = whole.splits;
  pin_reduce(b, whole);
  return out;
}

void pin_reduce(detail::Blocking& blocking, const KernelLaunch& whole) {
  if (!whole.through_workspace()) return;
  blocking.reduce_cols = whole.reduce.workgroup_size[0], blocking.reduce_rows = whole.reduce.workgroup_size[1];
  blocking.workspace_element_size = whole.workspace_element_size;
}

std::string fp32_sums_reduce(const Types& types) {
  if (types.output == DataType::bf16) return "splitk_reduce_bf16_bf16";
  return fmt::format("splitk_reduce_f16_{}", to_string(types.output));
}

void add_reduce(KernelLaunch& plan, std::string shader, uint32_t m, uint32_t n, uint32_t batch,
                uint32_t workspace_element_size) {
  plan.reduce.shader = std::move(shader);
  plan.workspace_element_size = workspace_element_size;
  plan.reduce.workgroup_size = {64, 4, 1};
  plan.reduce_grid = {(n + 63) / 64, (m + 3) / 4, batch};
}

std::array<uint32_t, 3> dispatch_grid(const DeviceInfo& device, const LaunchShape& shape, uint32_t m, uint32_t n) {
  const uint32_t tx = shape.tile[0] ? shape.tile[0] : shape.workgroup_size[0];
  const uint32_t ty = shape.tile[1] ? shape.tile[1] : shape.workgroup_size[1];
  const uint64_t gx = (uint64_t{n} + tx - 1) / tx;
  const uint64_t gy = (uint64_t{m} + ty - 1) / ty;
  if (gx > device.max_workgroup_count[0] || gy > device.max_workgroup_count[1]) {
    throw Error(ErrorCode::too_large,
                fmt::format("a {}x{} result needs {}x{} workgroups; {} allows {}x{} (maxComputeWorkGroupCount)", m, n,
                            gx, gy, device.name, device.max_workgroup_count[0], device.max_workgroup_count[1]));
  }
  return {static_cast<uint32_t>(gx), static_cast<uint32_t>(gy), 1};
}

void check_supported(const DeviceInfo& device, const tuning::Table& table, const Types& types,
                     const GemmOptions& options) {
  detail::count_check(detail::Checked::support);
  // Enums cast from integers the API does not define: refuse them before anything sizes or switches on them.
  for (const DataType type : {types.input, types.output}) {
    if (element_size(type) == 0) {
      std::string known;
      for (const DataType t : all_data_types) known += fmt::format("{}{}", known.empty() ? "" : ", ", to_string(t));
      throw Error(ErrorCode::unsupported_type,
                  fmt::format("element type {} is not one vkgemm knows ({})", static_cast<int>(type), known));
    }
  }
  const KernelSpec* spec = find_spec(options.kernel);
  if (!spec && options.kernel != Kernel::automatic) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("GemmOptions::kernel {} is not one vkgemm knows ({}, auto)", static_cast<int>(options.kernel),
                            kernel_list()));
  }
  const Types t = effective(types, options);
  if (!spec) {
    check_types(device, t);
    return;  // auto falls back to the tiled kernel at a size that fits
  }
  check_types_for(device, *spec, t);
  spec->check({device, table, options, t});
}

KernelLaunch plan(const DeviceInfo& device, const tuning::Table& table, const GemmOptions& options, const Problem& p) {
  check_supported(device, table, p.types, options);
  return plan_supported(device, table, options, p);
}

KernelLaunch plan_supported(const DeviceInfo& device, const tuning::Table& table, const GemmOptions& options,
                    const Problem& p) {
  const Types types = effective(p.types, options);
  const LaunchContext asked{device, table, options, types};
  const GemmOptions resolved = options.kernel == Kernel::automatic ? choose_automatic(asked, p) : options;
  const KernelSpec& spec = *find_spec(resolved.kernel);
  if ((p.trans_a || p.trans_b) && !spec.reads_transposed) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the {} kernel (GemmOptions::kernel) reads untransposed operands only (a row-major "
                            "op(A) = A and op(B) = B); use {} for transposed ones",
                            to_string(spec.kernel), alternatives(types.input, true)));
  }
  KernelLaunch out = spec.launch({device, table, resolved, types}, p);
  check_grids(device, out, p);
  return out;
}

KernelLaunch plan_piece(const DeviceInfo& device, const tuning::Table& table, const Pinning& pinning, const Problem& p) {
  Problem piece = p;
  piece.splits = pinning.splits;
  const Types types = effective(p.types, pinning.options);
  KernelLaunch out = find_spec(pinning.options.kernel)->launch({device, table, pinning.options, types}, piece);
  check_grids(device, out, piece);
  return out;
}

std::string kernel_list() {
  std::string out;
  for (const Kernel kernel : all_kernels()) out += fmt::format("{}{}", out.empty() ? "" : ", ", to_string(kernel));
  return out;
}

}  // namespace vkgemm::kernels
