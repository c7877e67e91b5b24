// A physical device as the engine keeps it: its handle, what it offers (DeviceInfo, found by
// device/device_query.cpp) and the few facts of it that creating a vk::Device and binding buffers need.
#pragma once

#include <cstdint>

#include <volk.h>

#include "vkgemm/device_info.hpp"

namespace vkgemm {

// The storage buffers every GEMM kernel binds, set 0 bindings 0 to 4 (A, B, C, the epilogue's bias and the
// K slices' partial sums where the skinny kernel adds them in its own pass; kernels/pipelines.cpp): the push
// descriptors a device must allow for vkgemm to push them.
inline constexpr uint32_t kGemmBindings = 5;

struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  DeviceInfo info;
  uint32_t compute_family = 0;  // valid when info.has_compute_queue
  // The family of DeviceInfo::copy_queues (valid where there are any).
  uint32_t copy_family = 0;
  uint64_t storage_offset_alignment = 1;  // minStorageBufferOffsetAlignment
};

}  // namespace vkgemm
