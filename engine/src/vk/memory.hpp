// Buffers and their memory. Storage buffers live in device-local memory; on a CPU device or one with
// unified memory they are also host-visible and mapped (no staging copies), elsewhere the engine copies
// through a host-visible staging buffer.
#pragma once

#include <cstdint>

#include <volk.h>

#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vk/instance.hpp"

namespace vkgemm::vk {

enum class MemoryUse {
  storage,   // read and written by kernels
  staging,   // host-visible, for copies to and from storage buffers
};

struct AllocatedBuffer {
  DeviceHandle<VkBuffer> buffer;
  DeviceHandle<VkDeviceMemory> memory;
  void* mapped = nullptr;  // non-null when host-visible
  uint64_t size = 0;
};

class MemoryAllocator {
 public:
  MemoryAllocator(const Instance& instance, const Device& device, const DeviceInfo& info);

  // True when storage buffers are host-visible and mapped, so reads and writes need no staging.
  bool storage_is_mapped() const noexcept { return storage_mapped_; }

  // Throws vkgemm::Error: too_large past maxMemoryAllocationSize or the heap, out_of_memory when refused.
  AllocatedBuffer create(uint64_t bytes, MemoryUse use, const char* debug_name) const;

 private:
  uint32_t find_type(uint32_t allowed, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;

  const Instance& instance_;
  const Device& device_;
  const DeviceInfo& info_;
  VkPhysicalDeviceMemoryProperties props_{};
  bool storage_mapped_ = false;
};

}  // namespace vkgemm::vk
