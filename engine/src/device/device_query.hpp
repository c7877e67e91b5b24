// Finding devices: what each one offers (DeviceInfo). Which one an engine takes: device_choice.hpp.
#pragma once

#include <string>
#include <vector>

#include <volk.h>

#include "vkgemm/device_info.hpp"

namespace vkgemm {

// The storage buffers every GEMM kernel binds, set 0 bindings 0 to 3 (A, B, C and the epilogue's bias;
// kernels/pipelines.cpp): the push descriptors a device must allow for vkgemm to push them.
inline constexpr uint32_t kGemmBindings = 4;

struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  DeviceInfo info;
  uint32_t compute_family = 0;  // valid when info.has_compute_queue
  uint64_t storage_offset_alignment = 1;  // minStorageBufferOffsetAlignment
};

// instance_version: the API version the instance was created for; structs of later versions are not
// queried (the validation layer reports them, and the driver may not honour them).
std::vector<PhysicalDevice> enumerate_devices(VkInstance instance, uint32_t instance_version);

// Their DeviceInfo, in the same order (which device an engine takes: device_choice.hpp).
std::vector<DeviceInfo> device_infos(std::vector<PhysicalDevice> devices);

}  // namespace vkgemm
