#include "kernels/registry.hpp"

#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "kernels/spirv_table.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {

std::span<const uint32_t> spirv(Kernel kernel, DataType type) {
  const auto name = fmt::format("{}_{}", to_string(kernel), to_string(type));
  for (const auto& blob : spirv_table()) {
    if (name == blob.name) return {blob.words, blob.bytes / sizeof(uint32_t)};
  }
  throw Error(ErrorCode::unsupported_type, fmt::format("this build of vkgemm has no {} kernel for {}",
                                                       to_string(kernel), to_string(type)));
}

LaunchShape launch_shape(Kernel kernel, DataType type, const GemmOptions& options) {
  const uint32_t t = options.tile;
  if (t == 0 || t > 1024) {
    throw Error(ErrorCode::invalid_argument, fmt::format("tile size {} is out of range (1 to 1024)", t));
  }
  LaunchShape shape;
  shape.workgroup_size = {t, t, 1};
  switch (kernel) {
    case Kernel::naive:
      shape.constants = {{0, t}, {1, t}};
      break;
    case Kernel::tiled:
      shape.constants = {{0, t}};
      shape.shared_bytes = 2u * t * t * static_cast<uint32_t>(element_size(type));
      break;
    case Kernel::automatic:
      throw Error(ErrorCode::invalid_argument, "kernel auto has no shape of its own: resolve() it first");
  }
  return shape;
}

GemmOptions resolve(const DeviceInfo& device, DataType type, const GemmOptions& options) {
  if (options.kernel != Kernel::automatic) return options;
  const std::pair<Kernel, uint32_t> candidates[] = {{Kernel::tiled, options.tile}, {Kernel::tiled, 16}, {Kernel::tiled, 8},
                                                    {Kernel::tiled, 4}, {Kernel::naive, 16}, {Kernel::naive, 8},
                                                    {Kernel::naive, 1}};
  std::optional<Error> first;
  for (const auto& [kernel, tile] : candidates) {
    GemmOptions o = options;
    o.kernel = kernel, o.tile = tile;
    try {
      check_supported(device, kernel, type, o);
      return o;
    } catch (const Error& e) {
      if (!first) first = e;
    }
  }
  throw *first;
}

void check_supported(const DeviceInfo& device, Kernel kernel, DataType type, const GemmOptions& options) {
  if (kernel == Kernel::automatic) {
    (void)resolve(device, type, options);
    return;
  }
  if (type == DataType::f64 && !device.float64) {
    throw Error(ErrorCode::unsupported_type,
                fmt::format("f64 needs the shaderFloat64 feature, which {} does not have or its VkDevice was created without", device.name));
  }
  const LaunchShape shape = launch_shape(kernel, type, options);
  const auto& wg = shape.workgroup_size;
  const uint64_t invocations = uint64_t{wg[0]} * wg[1] * wg[2];
  const auto name = fmt::format("{} tile {}", to_string(kernel), options.tile);
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
                            name, to_string(type), shape.shared_bytes, device.name, device.max_shared_memory));
  }
}

std::array<uint32_t, 3> dispatch_grid(const DeviceInfo& device, const LaunchShape& shape, uint32_t m, uint32_t n) {
  const uint64_t gx = (uint64_t{n} + shape.workgroup_size[0] - 1) / shape.workgroup_size[0];
  const uint64_t gy = (uint64_t{m} + shape.workgroup_size[1] - 1) / shape.workgroup_size[1];
  if (gx > device.max_workgroup_count[0] || gy > device.max_workgroup_count[1]) {
    throw Error(ErrorCode::too_large,
                fmt::format("a {}x{} result needs {}x{} workgroups; {} allows {}x{} (maxComputeWorkGroupCount)", m, n,
                            gx, gy, device.name, device.max_workgroup_count[0], device.max_workgroup_count[1]));
  }
  return {static_cast<uint32_t>(gx), static_cast<uint32_t>(gy), 1};
}

}  // namespace vkgemm::kernels
