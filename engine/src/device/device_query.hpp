// Finding devices: what each one offers (DeviceInfo) and which one a selector picks.
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

// Picks a device: `selector` is an index or a case-insensitive name substring; empty means the best
// device with a compute queue (discrete, integrated, virtual, CPU, other). Throws vkgemm::Error
// (no_device, device_not_found) listing what there is.
const PhysicalDevice& select_device(const std::vector<PhysicalDevice>& devices, const std::string& selector);

}  // namespace vkgemm
