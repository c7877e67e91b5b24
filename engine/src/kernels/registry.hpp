// The kernel registry: for each kernel, its SPIR-V per type, what a configuration asks of the device,
// its specialization constants and its dispatch grid. Adding a kernel means adding an entry here.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vkgemm/device_info.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::kernels {

struct SpecConstant {
  uint32_t id;
  uint32_t value;
};

struct LaunchShape {
  std::vector<SpecConstant> constants;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  uint32_t shared_bytes = 0;
};

// The SPIR-V for a kernel and type; throws vkgemm::Error when this build has no such variant.
std::span<const uint32_t> spirv(Kernel kernel, DataType type);

// What a configuration asks for; throws vkgemm::Error(invalid_argument) for a malformed one.
LaunchShape launch_shape(Kernel kernel, DataType type, const GemmOptions& options);

// Throws vkgemm::Error naming the limit when the device cannot run this configuration or type.
// Kernel::automatic is checked by resolving it.
void check_supported(const DeviceInfo& device, Kernel kernel, DataType type, const GemmOptions& options);

// The options to run: unchanged for a concrete kernel; for Kernel::automatic the first configuration that
// check_supported accepts (see types.hpp), or the first refusal thrown when none is.
GemmOptions resolve(const DeviceInfo& device, DataType type, const GemmOptions& options);

// Workgroups to cover an m x n result; throws vkgemm::Error(too_large) past maxComputeWorkGroupCount.
std::array<uint32_t, 3> dispatch_grid(const DeviceInfo& device, const LaunchShape& shape, uint32_t m, uint32_t n);

}  // namespace vkgemm::kernels
