// Buffers and their memory. Storage buffers live in device-local memory; on a CPU device or one with
// unified memory they are also host-visible and mapped (no staging copies), elsewhere the engine copies
// through host-visible staging buffers or the caller's own pages imported (vk/host_copies.hpp,
// docs/design/host-copies.md).
#pragma once

#include <cstdint>
#include <optional>

#include <volk.h>

#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vk/instance.hpp"

namespace vkgemm::vk {

enum class MemoryUse {
  storage,   // read and written by kernels
  // Staging, written by the host and copied to storage buffers: host-visible and coherent (a host write
  // needs no flush), write-combined where the device offers it (the host only writes it).
  upload,
  // Staging, copied from storage buffers and read by the host: host-visible and cached where the device
  // offers it, since a CPU read of uncached (write-combined) memory runs an order of magnitude slower than
  // a read of cached memory; coherent where a cached type is, else invalidated before each read.
  download,
};

struct AllocatedBuffer {
  DeviceHandle<VkBuffer> buffer;
  DeviceHandle<VkDeviceMemory> memory;
  void* mapped = nullptr;  // non-null when host-visible
  uint64_t size = 0;
  bool coherent = true;  // false: invalidate (MemoryAllocator::invalidate) before the host reads it
  bool cached = false;   // host-cached: a CPU read of it runs at memory speed
};

class MemoryAllocator {
 public:
  MemoryAllocator(const Instance& instance, const Device& device, const DeviceInfo& info);

  // True when storage buffers are host-visible and mapped, so reads and writes need no staging.
  bool storage_is_mapped() const noexcept { return storage_mapped_; }

  // Throws vkgemm::Error: too_large past maxMemoryAllocationSize or the heap, out_of_memory when refused.
  AllocatedBuffer create(uint64_t bytes, MemoryUse use, const char* debug_name) const;

  // A transfer buffer on the host's own pages [base, base + bytes) (VK_EXT_external_memory_host, where
  // DeviceInfo::host_import): base and bytes multiples of DeviceInfo::imported_host_alignment. Not mapped:
  // the caller has the pages. Empty where the driver refuses the pointer (not host memory it can pin, out
  // of memory): the caller copies through staging instead. The pages must stay mapped while it lives.
  std::optional<AllocatedBuffer> import_host(const void* base, uint64_t bytes, const char* debug_name) const;

  // Makes the device's writes to a non-coherent mapped buffer visible to the host (nothing where coherent).
  void invalidate(const AllocatedBuffer& buffer) const;

 private:
  // A buffer of `bytes` for `usage` (shared by the device's queue families) (`next`: its create info's chain), and its memory requirements.
  DeviceHandle<VkBuffer> make_buffer(uint64_t bytes, VkBufferUsageFlags usage, const void* next,
                                     VkMemoryRequirements& req) const;
  // The allowed type with every `required` flag that ranks highest by `rank` (the lowest index among equals).
  uint32_t find_type(uint32_t allowed, VkMemoryPropertyFlags required, int (*rank)(VkMemoryPropertyFlags)) const;

  const Instance& instance_;
  const Device& device_;
  const DeviceInfo& info_;
  VkPhysicalDeviceMemoryProperties props_{};
  bool storage_mapped_ = false;
};

}  // namespace vkgemm::vk
