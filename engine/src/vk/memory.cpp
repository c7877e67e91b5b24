#include "vk/memory.hpp"

#include <fmt/format.h>

#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::vk {
namespace {
constexpr uint32_t kNoType = ~0u;
constexpr VkMemoryPropertyFlags kHostMapped = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
}  // namespace

MemoryAllocator::MemoryAllocator(const Instance& instance, const Device& device, const DeviceInfo& info)
    : instance_(instance), device_(device), info_(info) {
  vkGetPhysicalDeviceMemoryProperties(device.physical(), &props_);
  // Unified memory: a CPU device or an integrated GPU whose device-local memory the host can map.
  if (info.type == DeviceType::cpu || info.type == DeviceType::integrated_gpu) {
    for (uint32_t i = 0; i < props_.memoryTypeCount; ++i) {
      const auto flags = props_.memoryTypes[i].propertyFlags;
      if ((flags & (kHostMapped | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) ==
          (kHostMapped | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
        storage_mapped_ = true;
    }
  }
}

uint32_t MemoryAllocator::find_type(uint32_t allowed, VkMemoryPropertyFlags required,
                                    VkMemoryPropertyFlags preferred) const {
  uint32_t fallback = kNoType;
  for (uint32_t i = 0; i < props_.memoryTypeCount; ++i) {
    if (!(allowed & (1u << i))) continue;
    const auto flags = props_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback == kNoType) fallback = i;
  }
  return fallback;
}

AllocatedBuffer MemoryAllocator::create(uint64_t bytes, MemoryUse use, const char* debug_name) const {
  if (bytes == 0) throw Error(ErrorCode::invalid_argument, "a buffer of 0 bytes was requested");
  if (info_.max_allocation_size && bytes > info_.max_allocation_size) {
    throw Error(ErrorCode::too_large,
                fmt::format("a buffer of {} bytes exceeds maxMemoryAllocationSize ({} bytes) on {}", bytes,
                            info_.max_allocation_size, info_.name));
  }
  device_.check_alive("a buffer's allocation");
  const VkDevice dev = device_.get();
  const auto& t = device_.table();
  AllocatedBuffer out;
  out.size = bytes;

  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes;
  info.usage = VkBufferUsageFlags{VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  // Storage buffers may hold an indirect dispatch's command too (the emulated product's workspace).
  if (use == MemoryUse::storage) info.usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  device_.check(t.vkCreateBuffer(dev, &info, nullptr, &buffer), "vkCreateBuffer");
  out.buffer = DeviceHandle<VkBuffer>(t, dev, buffer);

  VkMemoryRequirements req;
  t.vkGetBufferMemoryRequirements(dev, buffer, &req);
  const bool mapped = use == MemoryUse::staging || storage_is_mapped();
  const VkMemoryPropertyFlags required = mapped ? kHostMapped : VkMemoryPropertyFlags{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT};
  const VkMemoryPropertyFlags preferred =
      use == MemoryUse::staging ? (required | VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                                : (required | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  const uint32_t type = find_type(req.memoryTypeBits, required, preferred);
  if (type == kNoType) {
    throw Error(ErrorCode::vulkan_error, fmt::format("{} offers no suitable memory type for a buffer", info_.name));
  }
  const uint64_t heap = props_.memoryHeaps[props_.memoryTypes[type].heapIndex].size;
  if (req.size > heap) {
    throw Error(ErrorCode::too_large, fmt::format("a buffer of {} bytes exceeds the {} bytes of its memory heap on {}",
                                                  req.size, heap, info_.name));
  }

  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const VkResult r = t.vkAllocateMemory(dev, &alloc, nullptr, &memory);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    throw Error(ErrorCode::out_of_memory,
                fmt::format("vkAllocateMemory failed: {} ({} could not allocate {} bytes)", result_name(r), info_.name,
                            req.size), r);
  }
  device_.check(r, "vkAllocateMemory");
  out.memory = DeviceHandle<VkDeviceMemory>(t, dev, memory);
  device_.check(t.vkBindBufferMemory(dev, buffer, memory, 0), "vkBindBufferMemory");
  if (mapped) device_.check(t.vkMapMemory(dev, memory, 0, VK_WHOLE_SIZE, 0, &out.mapped), "vkMapMemory");

  instance_.set_name(dev, VK_OBJECT_TYPE_BUFFER, reinterpret_cast<uint64_t>(buffer), debug_name);
  return out;
}

}  // namespace vkgemm::vk
