#include "kernels/registry.hpp"

#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "kernels/spirv_table.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {

std::string variant_name(Kernel kernel, const Types& types) {
  if (types.input != DataType::f16) return fmt::format("{}_{}", to_string(kernel), to_string(types.input));
  return fmt::format("{}_f16_{}", to_string(kernel), types.f16_accumulate ? "acc16" : to_string(types.output));
}

std::span<const uint32_t> spirv(Kernel kernel, const Types& types) {
  const auto name = variant_name(kernel, types);
  for (const auto& blob : spirv_table()) {
    if (name == blob.name) return {blob.words, blob.bytes / sizeof(uint32_t)};
  }
  for (const auto& missing : spirv_missing()) {
    if (to_string(kernel) == missing.kernel) {
      throw Error(ErrorCode::unsupported_config,
                  fmt::format("this build of vkgemm has no {} kernel: {}", to_string(kernel), missing.reason));
    }
  }
  throw Error(ErrorCode::unsupported_type, fmt::format("this build of vkgemm has no {} kernel for {} inputs and {} C{}",
                                                       to_string(kernel), to_string(types.input),
                                                       to_string(types.output),
                                                       types.f16_accumulate ? " with f16 accumulation" : ""));
}

namespace {

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

LaunchShape simt_launch(Kernel kernel, const Types& types, const GemmOptions& options) {
  const uint32_t t = options.tile;
  if (t == 0 || t > 1024) {
    throw Error(ErrorCode::invalid_argument, fmt::format("tile size {} is out of range (1 to 1024)", t));
  }
  LaunchShape shape;
  shape.workgroup_size = {t, t, 1};
  if (kernel == Kernel::naive) {
    shape.constants = {{0, t}, {1, t}};
  } else {
    shape.constants = {{0, t}};
    shape.shared_bytes = 2u * t * t * static_cast<uint32_t>(element_size(types.input));
  }
  return shape;
}

}  // namespace

LaunchShape launch_shape(const DeviceInfo& device, Kernel kernel, const Types& types, const GemmOptions& options,
                         uint32_t m, uint32_t n, uint32_t /*k*/) {
  switch (kernel) {
    case Kernel::naive:
    case Kernel::tiled: return simt_launch(kernel, types, options);
    case Kernel::coopmat: return coopmat_launch(device, types, options, m, n);
    case Kernel::coopmat2: return coopmat2_launch(device, types, options, m, n);
  }
  throw Error(ErrorCode::invalid_argument, "unknown kernel");
}

void check_supported(const DeviceInfo& device, Kernel kernel, const Types& types, const GemmOptions& options) {
  check_types(device, types);
  if (is_matrix_kernel(kernel)) {
    if (types.input != DataType::f16) {
      throw Error(ErrorCode::unsupported_type,
                  fmt::format("the {} kernel multiplies f16 matrices, not {}", to_string(kernel), to_string(types.input)));
    }
  }
  // The tile choice of the matrix kernels depends on the shape; a large square one shows the largest.
  // First, so a malformed option is named as such whatever the device.
  const LaunchShape shape = launch_shape(device, kernel, types, options, 1u << 14, 1u << 14, 1u << 14);
  if (is_matrix_kernel(kernel)) {
    check_matrix_kernel(device, kernel, types);  // the device first: lacking the extension is the usual reason
    spirv(kernel, types);                         // then this build: compiled without it (and why)
  }
  const auto& wg = shape.workgroup_size;
  const uint64_t invocations = uint64_t{wg[0]} * wg[1] * wg[2];
  const auto name = is_matrix_kernel(kernel) ? std::string(to_string(kernel))
                                             : fmt::format("{} tile {}", to_string(kernel), options.tile);
  if (invocations > device.max_workgroup_invocations) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("{} needs {} invocations per workgroup; {} allows {} (maxComputeWorkGroupInvocations)",
                            name, invocations, device.name, device.max_workgroup_invocations));
  }
  for (size_t i = 0; i < 3; ++i) {
    if (wg[i] > device.max_workgroup_size[i]) {
      throw Error(ErrorCode::unsupported_config,
                  fmt::format("{} needs a workgroup {} wide in dimension {}; {} allows {} (maxComputeWorkGroupSize)",
                              name, wg[i], i, device.name, device.max_workgroup_size[i]));
    }
  }
  if (shape.shared_bytes > device.max_shared_memory) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("{} for {} needs {} bytes of shared memory; {} allows {} (maxComputeSharedMemorySize)",
                            name, to_string(types.input), shape.shared_bytes, device.name, device.max_shared_memory));
  }
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

}  // namespace vkgemm::kernels
