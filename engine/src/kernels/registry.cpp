#include "kernels/registry.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "kernels/push_constants.hpp"
#include "kernels/spirv_table.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

constexpr uint32_t kMaxSplits = 32;
constexpr uint32_t kMinSliceK = 256;         // split-K slices shorter than this do not pay for the second pass
constexpr uint64_t kBusyWorkgroups = 256;    // enough blocks to fill a large GPU without splitting

// The types themselves, whatever the kernel: which combinations exist and what the device must have.
void check_types(const DeviceInfo& device, const Types& types) {
  const DataType in = types.input, out = types.output;
  if (in == DataType::f16) {
    if (out != DataType::f32 && out != DataType::f16) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("f16 inputs give C of f32 or f16, not {}", to_string(out)));
    }
    if (types.f16_accumulate && out != DataType::f16) {
      throw Error(ErrorCode::invalid_argument, "f16 accumulation gives C of f16; ask for C f16 (--out-type f16)");
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
  if (out != in) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} inputs give C of {}, not {}", to_string(in),
                                                         to_string(in), to_string(out)));
  }
  if (in == DataType::f64 && !device.float64) {
    throw Error(ErrorCode::unsupported_type,
                fmt::format("f64 needs the shaderFloat64 feature, which {} does not have", device.name));
  }
}

// What a kernel takes beyond the types themselves.
void check_kernel_type(Kernel kernel, DataType type) {
  if (kernel == Kernel::blocked && type == DataType::i32) {
    throw Error(ErrorCode::unsupported_type, "the blocked kernel computes f32 and f64; use naive or tiled for i32");
  }
  if (kernel == Kernel::blocked && type == DataType::f16) {
    throw Error(ErrorCode::unsupported_type,
                "the blocked kernel computes f32 and f64; use coopmat2, coopmat, tiled or auto for f16");
  }
  if (is_matrix_kernel(kernel) && type != DataType::f16) {
    throw Error(ErrorCode::unsupported_type,
                fmt::format("the {} kernel multiplies f16 matrices, not {}", to_string(kernel), to_string(type)));
  }
}

// The caller's types with the options' f16 accumulation folded in.
Types effective(const Types& types, const GemmOptions& options) {
  Types t = types;
  t.f16_accumulate = t.f16_accumulate || options.f16_accumulate;
  return t;
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

void check_type(const DeviceInfo& device, Kernel kernel, DataType type) {
  check_types(device, Types(type));
  check_kernel_type(kernel, type);
}

LaunchShape square_shape(Kernel kernel, const Types& types, uint32_t t) {
  if (t == 0 || t > 1024) {
    throw Error(ErrorCode::invalid_argument, fmt::format("tile size {} is out of range (1 to 1024)", t));
  }
  LaunchShape shape;
  shape.shader = shader_name(kernel, types);
  shape.workgroup_size = {t, t, 1};
  if (kernel == Kernel::naive) {
    shape.constants = {{0, t}, {1, t}};
  } else {
    shape.constants = {{0, t}};
    shape.shared_bytes = 2u * t * t * static_cast<uint32_t>(element_size(types.input));
  }
  return shape;
}

uint32_t blocked_threads(const BlockedConfig& c) { return (c.bm / c.tm) * (c.bn / c.tn); }

uint32_t blocked_shared_bytes(const BlockedConfig& c, DataType type, uint32_t pad) {
  const uint32_t vec = 4 * static_cast<uint32_t>(element_size(type));
  return 2 * (c.bk * (c.bm / 4 + pad) + c.bk * (c.bn / 4)) * vec;
}

// The A tile's row padding (one vec4 against bank conflicts) where it fits, none where it would not.
uint32_t blocked_padding(const DeviceInfo& device, const BlockedConfig& c, DataType type) {
  return blocked_shared_bytes(c, type, 1) <= device.max_shared_memory ? 1 : 0;
}

std::string describe(const BlockedConfig& c, uint32_t splits) {
  BlockedConfig d = c;
  d.split_k = splits;
  return to_string(d);
}

// The blocked configuration for a product: the caller's, else the tuning table's nearest, else the fallback.
BlockedConfig choose_blocked(const DeviceInfo& device, const tuning::Table& table, const GemmOptions& options,
                             DataType type, uint32_t m, uint32_t n, uint32_t k) {
  if (options.blocked.chosen()) return options.blocked;
  BlockedConfig c = fallback_blocked_config(type);
  if (const auto entry = table.lookup(device, type, m, n, k); entry && entry->kernel == Kernel::blocked) {
    try {
      check_blocked_config(device, type, entry->config);
      c = entry->config;
    } catch (const Error&) {
      // A table made for another driver may not fit this one's limits: keep the fallback.
    }
  }
  c.split_k = options.blocked.split_k != 0 ? options.blocked.split_k : c.split_k;
  return c;
}

// Split-K when the output has too few blocks to keep the device busy and K is long enough to share.
uint32_t choose_splits(const BlockedConfig& c, uint32_t m, uint32_t n, uint32_t k, uint32_t batch) {
  if (c.split_k != 0) return std::min(c.split_k, std::max(1u, k / c.bk));
  const uint64_t blocks = uint64_t{(m + c.bm - 1) / c.bm} * ((n + c.bn - 1) / c.bn) * batch;
  if (blocks >= kBusyWorkgroups / 2) return 1;
  const auto wanted = static_cast<uint32_t>((kBusyWorkgroups + blocks - 1) / blocks);
  return std::clamp(std::min(wanted, k / kMinSliceK), 1u, kMaxSplits);
}

LaunchShape matrix_shape(const DeviceInfo& device, Kernel kernel, const Types& types, const GemmOptions& options,
                         uint32_t m, uint32_t n, uint32_t k, uint32_t batch) {
  LaunchShape shape = kernel == Kernel::coopmat ? coopmat_launch(device, types, options, m, n)
                                                : coopmat2_launch(device, types, options, m, n, k, batch);
  shape.shader = shader_name(kernel, types);
  return shape;
}

}  // namespace

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

BlockedConfig fallback_blocked_config(DataType type) {
  // 64 x 64 blocks of 8 x 4 per invocation: 128 invocations (Vulkan's minimum limit) and 8.25 KiB of
  // shared memory for f32; f64 needs 16.5 KiB, just over the 16 KiB minimum (auto then takes tiled).
  (void)type;
  return {.bm = 64, .bn = 64, .bk = 8, .tm = 8, .tn = 4, .lanes_n = 8, .split_k = 0, .group_m = 1};
}

void check_blocked_config(const DeviceInfo& device, DataType type, const BlockedConfig& c) {
  const auto bad = [&](const std::string& rule) {
    throw Error(ErrorCode::invalid_argument, fmt::format("blocked configuration {}: {}", describe(c, c.split_k), rule));
  };
  if (!c.bm || !c.bn || !c.bk || !c.tm || !c.tn || !c.lanes_n) bad("every parameter must be positive");
  if (c.tm % 4 || c.tn % 4 || c.bk % 4) bad("tm, tn and bk must be multiples of 4");
  if (c.bm % c.tm || c.bn % c.tn) bad("bm must be a multiple of tm and bn of tn");
  const uint32_t threads = blocked_threads(c);
  if (threads % 32) bad(fmt::format("(bm/tm)*(bn/tn) = {} invocations must be a multiple of 32", threads));
  if (32 % c.lanes_n || (c.bn / c.tn) % c.lanes_n || (c.bm / c.tm) % (32 / c.lanes_n)) {
    bad("lanes_n must divide 32 and bn/tn, and 32/lanes_n must divide bm/tm");
  }
  if ((c.bm * c.bk / 4) % threads || (c.bk * c.bn / 4) % threads || c.bm * c.bk / 4 < threads ||
      c.bk * c.bn / 4 < threads) {
    bad("each invocation must load whole vec4s: bm*bk/4 and bk*bn/4 must be multiples of the invocation count");
  }
  if (c.split_k > kMaxSplits) bad(fmt::format("split_k must be at most {}", kMaxSplits));
  if (c.group_m == 0 || c.group_m > 64) bad("group_m must be between 1 and 64");
  check_type(device, Kernel::blocked, type);
  check_workgroup(device, fmt::format("blocked {}", describe(c, c.split_k)), {threads, 1, 1},
                  blocked_shared_bytes(c, type, blocked_padding(device, c, type)), type);
}

void check_supported(const DeviceInfo& device, const tuning::Table& table, const Types& types,
                     const GemmOptions& options) {
  // Enums cast from integers the API does not define: refuse them before anything sizes or switches on them.
  for (const DataType type : {types.input, types.output}) {
    if (element_size(type) == 0) {
      throw Error(ErrorCode::unsupported_type, fmt::format("element type {} is not one vkgemm knows (f32, i32, f64, f16)",
                                                           static_cast<int>(type)));
    }
  }
  if (to_string(options.kernel) == "?") {
    throw Error(ErrorCode::unsupported_config, fmt::format("kernel {} is not one vkgemm knows (naive, tiled, blocked, "
                                                           "auto, coopmat, coopmat2)", static_cast<int>(options.kernel)));
  }
  const Types t = effective(types, options);
  check_types(device, t);
  check_kernel_type(options.kernel, t.input);
  switch (options.kernel) {
    case Kernel::naive:
    case Kernel::tiled: {
      const LaunchShape s = square_shape(options.kernel, t, options.tile);
      check_workgroup(device, fmt::format("{} tile {}", to_string(options.kernel), options.tile), s.workgroup_size,
                      s.shared_bytes, t.input);
      return;
    }
    case Kernel::blocked:
      check_blocked_config(device, t.input, choose_blocked(device, table, options, t.input, 1024, 1024, 1024));
      return;
    case Kernel::coopmat:
    case Kernel::coopmat2: {
      // The tile choice depends on the shape; a large square one shows the largest. First, so that a
      // malformed option is named as such whatever the device.
      const LaunchShape s = matrix_shape(device, options.kernel, t, options, 1u << 14, 1u << 14, 1u << 14, 1);
      check_matrix_kernel(device, options.kernel, t);  // the device first: lacking the extension is the usual reason
      spirv(s.shader);                                 // then this build: compiled without it (and why)
      check_workgroup(device, std::string(to_string(options.kernel)), s.workgroup_size, s.shared_bytes, t.input);
      return;
    }
    case Kernel::automatic:
      return;  // auto falls back to the tiled kernel at a size that fits
  }
}

Plan plan(const DeviceInfo& device, const tuning::Table& table, const GemmOptions& options, const Problem& p) {
  const Types types = effective(p.types, options);
  const DataType type = types.input;
  Kernel kernel = options.kernel;
  GemmOptions resolved = options;
  const bool transposed = p.trans_a || p.trans_b;
  // Which kernels read transposed operands: all but blocked.
  const auto reads_transposed = [](Kernel k) { return k != Kernel::blocked; };
  if (kernel == Kernel::automatic && type == DataType::f16 && p.k > 0) {
    // No tuning for f16: the cooperative-matrix kernels where they run (coopmat2 first), else tiled. k = 0
    // (an f16 C of odd size or offset, which the fill cannot zero) takes tiled, whose empty sum every
    // device's tests cover.
    for (const Kernel k : {Kernel::coopmat2, Kernel::coopmat}) {
      if (transposed && !reads_transposed(k)) continue;
      try {
        check_supported(device, table, types, {.kernel = k, .tile = 16, .f16_accumulate = types.f16_accumulate});
        kernel = k;
        resolved.kernel = k;
        resolved.tile = 16;
        break;
      } catch (const Error&) {
        // Not on this device or in this build: the next one.
      }
    }
  }
  if (kernel == Kernel::automatic && type != DataType::f16) {
    // The tuner's verdict for the nearest shape, when it chose the tiled kernel and that still fits.
    if (const auto entry = table.lookup(device, type, p.m, p.n, p.k); entry && entry->kernel == Kernel::tiled) {
      try {
        check_supported(device, table, types, {.kernel = Kernel::tiled, .tile = entry->tile});
        kernel = Kernel::tiled;
        resolved.kernel = Kernel::tiled;
        resolved.tile = entry->tile;
      } catch (const Error&) {
        // Fall through to the usual choice.
      }
    }
  }
  if (transposed && !reads_transposed(kernel)) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the {} kernel reads untransposed operands only (a row-major op(A) = A and op(B) = B); "
                            "use {} or auto for transposed ones", to_string(kernel),
                            type == DataType::f16 ? "coopmat2, tiled" : "tiled"));
  }
  if (kernel == Kernel::automatic) {
    kernel = Kernel::tiled;
    if ((type == DataType::f32 || type == DataType::f64) && !transposed) {
      try {
        check_blocked_config(device, type, choose_blocked(device, table, options, type, p.m, p.n, p.k));
        kernel = Kernel::blocked;
      } catch (const Error&) {
        // The blocked kernel does not fit this device: the tiled kernel below, at a size that fits.
      }
    }
  }
  Plan out;
  out.kernel = kernel;
  if (kernel == Kernel::naive || kernel == Kernel::tiled) {
    GemmOptions o = resolved;
    if (resolved.kernel == Kernel::automatic) {
      // The simple kernels' ladder: the first that this device (as created) can run; when none can, the
      // first refusal, which names the missing feature or limit.
      static constexpr std::pair<Kernel, uint32_t> ladder[] = {{Kernel::tiled, 16}, {Kernel::tiled, 8},
                                                              {Kernel::tiled, 4},  {Kernel::naive, 16},
                                                              {Kernel::naive, 8},  {Kernel::naive, 1}};
      std::optional<Error> first;
      bool found = false;
      for (const auto& [candidate, tile] : ladder) {
        try {
          check_supported(device, table, types, {.kernel = candidate, .tile = tile, .f16_accumulate = types.f16_accumulate});
          kernel = candidate, o.tile = tile, found = true;
          break;
        } catch (const Error& e) {
          if (!first) first = e;
        }
      }
      if (!found) throw *first;
      out.kernel = kernel;
    }
    check_supported(device, table, types, {.kernel = kernel, .tile = o.tile, .f16_accumulate = types.f16_accumulate});
    out.main = square_shape(kernel, types, o.tile);
    out.grid = {(p.n + o.tile - 1) / o.tile, (p.m + o.tile - 1) / o.tile, p.batch};
    out.k_split = std::max(p.k, 1u);
    out.description = fmt::format("tile {}", o.tile);
  } else if (is_matrix_kernel(kernel)) {
    check_supported(device, table, types, resolved);
    out.main = matrix_shape(device, kernel, types, resolved, p.m, p.n, p.k, p.batch);
    // The transposes are known when the pipeline is built (coopmat2.comp 5 and 6, coopmat.comp 10 and 11).
    const uint32_t trans_id = kernel == Kernel::coopmat2 ? 5 : 10;
    out.main.constants.push_back({trans_id, p.trans_a ? 1u : 0u});
    out.main.constants.push_back({trans_id + 1, p.trans_b ? 1u : 0u});
    out.grid = dispatch_grid(device, out.main, p.m, p.n);
    out.grid[2] = p.batch;
    out.k_split = std::max(p.k, 1u);
    out.description = fmt::format("{}x{}", out.main.tile[1], out.main.tile[0]);
    const uint32_t wanted = kernel != Kernel::coopmat2 || p.k == 0 ? 1
                            : p.splits ? p.splits : coopmat2_splits(out.main, p.m, p.n, p.k, p.batch);
    if (wanted > 1) {
      // Slices of a multiple of 256 (whole K steps, and the K start of the shader's fast path); the main pass
      // writes fp32 partial sums (the variant of its accumulator with C f32), the reduce pass (workspace f32,
      // C of the caller's type) adds them with alpha and beta.
      constexpr uint32_t kSliceAlign = 256;
      const uint32_t rounds = (p.k + kSliceAlign - 1) / kSliceAlign;
      out.k_split = ((rounds + wanted - 1) / wanted) * kSliceAlign;
      out.splits = (p.k + out.k_split - 1) / out.k_split;
    }
    if (out.splits > 1) {
      out.main.shader = shader_name(kernel, {DataType::f16, DataType::f32, types.f16_accumulate});
      out.grid[2] = p.batch * out.splits;
      out.reduce.shader = fmt::format("splitk_reduce_f16_{}", to_string(types.output));
      out.reduce.workgroup_size = {64, 4, 1};
      out.reduce_grid = {(p.n + 63) / 64, (p.m + 3) / 4, p.batch};
      out.description += fmt::format(" split {}", out.splits);
    }
  } else {
    const BlockedConfig c = choose_blocked(device, table, options, type, p.m, p.n, p.k);
    check_blocked_config(device, type, c);
    out.blocked = c;
    const uint32_t wanted = choose_splits(c, p.m, p.n, p.k, p.batch);
    // Slices of whole K steps; the last may be shorter, none is empty.
    const uint32_t steps = (p.k + c.bk - 1) / c.bk;
    out.k_split = std::max(1u, ((steps + wanted - 1) / wanted) * c.bk);
    out.splits = p.k == 0 ? 1 : (p.k + out.k_split - 1) / out.k_split;
    const bool vec_a = p.lda % 4 == 0 && p.a_offset % 4 == 0 && p.stride_a % 4 == 0;
    const bool vec_b = p.ldb % 4 == 0 && p.b_offset % 4 == 0 && p.stride_b % 4 == 0;
    // With a split, C is the workspace: offset 0, row stride n, slices m * n apart.
    const bool vec_c = out.splits > 1 ? p.n % 4 == 0 && (uint64_t{p.m} * p.n) % 4 == 0
                                      : (p.ldc % 4 == 0 && p.c_offset % 4 == 0 && p.stride_c % 4 == 0);
    const uint32_t threads = blocked_threads(c);
    out.main.shader = shader_name(Kernel::blocked, types);
    const uint32_t pad = blocked_padding(device, c, type);
    out.main.constants = {{0, c.bm}, {1, c.bn}, {2, c.bk}, {3, c.tm}, {4, c.tn}, {5, c.lanes_n}, {6, threads},
                          {10, c.group_m}, {11, pad}};
    out.flags = (vec_a ? kVecA : 0) | (vec_b ? kVecB : 0) | (vec_c ? kVecC : 0);
    out.main.workgroup_size = {threads, 1, 1};
    out.main.shared_bytes = blocked_shared_bytes(c, type, pad);
    out.grid = {(p.n + c.bn - 1) / c.bn, (p.m + c.bm - 1) / c.bm, out.splits * p.batch};
    out.description = describe(c, out.splits);
    if (out.splits > 1) {
      out.reduce.shader = fmt::format("splitk_reduce_{}", to_string(type));
      out.reduce.workgroup_size = {64, 4, 1};
      out.reduce_grid = {(p.n + 63) / 64, (p.m + 3) / 4, p.batch};
    }
  }
  for (const auto* grid : {&out.grid, &out.reduce_grid}) {
    for (size_t i = 0; i < 3; ++i) {
      if ((*grid)[i] > device.max_workgroup_count[i]) {
        throw Error(ErrorCode::too_large,
                    fmt::format("a {}x{} result needs {} workgroups along axis {}; {} allows {} "
                                "(maxComputeWorkGroupCount)",
                                p.m, p.n, (*grid)[i], i, device.name, device.max_workgroup_count[i]));
      }
    }
  }
  return out;
}

}  // namespace vkgemm::kernels
