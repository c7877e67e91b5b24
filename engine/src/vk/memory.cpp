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
                                    int (*rank)(VkMemoryPropertyFlags)) const {
  uint32_t best = kNoType;
  int best_rank = 0;
  for (uint32_t i = 0; i < props_.memoryTypeCount; ++i) {
    if (!(allowed & (1u << i))) continue;
    const auto flags = props_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if (best == kNoType || rank(flags) > best_rank) best = i, best_rank = rank(flags);
  }
  return best;
}

namespace {

bool has(VkMemoryPropertyFlags flags, VkMemoryPropertyFlags bit) { return (flags & bit) != 0; }

// Storage: device-local first.
int rank_storage(VkMemoryPropertyFlags f) { return has(f, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT); }

// Upload staging (coherent, required): host memory, not the device's memory behind the bus (the copy engine
// reads across the bus at its own speed; a CPU memcpy across it is slower), write-combined before cached (the
// host only writes it: no snoop on the device's reads).
int rank_upload(VkMemoryPropertyFlags f) {
  return 2 * !has(f, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) + !has(f, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
}

// Download staging: cached above all (a CPU read of uncached memory is an order of magnitude slower), then
// coherent (no invalidation), then host memory.
int rank_download(VkMemoryPropertyFlags f) {
  return 4 * has(f, VK_MEMORY_PROPERTY_HOST_CACHED_BIT) + 2 * has(f, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) +
         !has(f, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
}

}  // namespace

DeviceHandle<VkBuffer> MemoryAllocator::make_buffer(uint64_t bytes, VkBufferUsageFlags usage, const void* next,
                                                    VkMemoryRequirements& req) const {
  const auto& t = device_.table();
  const VkDevice dev = device_.get();
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, next};
  info.size = bytes;
  info.usage = usage;
  // Shared by the compute queue and the copy queues where their families differ (a copy on one and the
  // product on the other, ordered by the host's waits: docs/design/host-copies.md), so no buffer needs an
  // ownership transfer between them.
  const std::span<const uint32_t> families = device_.families();
  info.sharingMode = families.size() > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
  if (families.size() > 1) {
    info.queueFamilyIndexCount = static_cast<uint32_t>(families.size());
    info.pQueueFamilyIndices = families.data();
  }
  VkBuffer buffer = VK_NULL_HANDLE;
  device_.check(t.vkCreateBuffer(dev, &info, nullptr, &buffer), "vkCreateBuffer");
  DeviceHandle<VkBuffer> out(t, dev, buffer);
  t.vkGetBufferMemoryRequirements(dev, buffer, &req);
  return out;
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

  VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  // Storage buffers may hold an indirect dispatch's command too (the emulated product's workspace).
  if (use == MemoryUse::storage) usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
  VkMemoryRequirements req;
  out.buffer = make_buffer(bytes, usage, nullptr, req);
  const VkBuffer buffer = out.buffer.get();

  const bool mapped = use != MemoryUse::storage || storage_is_mapped();
  const VkMemoryPropertyFlags required =
      use == MemoryUse::download ? VkMemoryPropertyFlags{VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT}
      : mapped                   ? kHostMapped
                                 : VkMemoryPropertyFlags{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT};
  const uint32_t type = find_type(req.memoryTypeBits, required,
                                  use == MemoryUse::upload     ? rank_upload
                                  : use == MemoryUse::download ? rank_download
                                                               : rank_storage);
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
  out.coherent = has(props_.memoryTypes[type].propertyFlags, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  out.cached = has(props_.memoryTypes[type].propertyFlags, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);

  instance_.set_name(dev, VK_OBJECT_TYPE_BUFFER, reinterpret_cast<uint64_t>(buffer), debug_name);
  return out;
}

void MemoryAllocator::invalidate(const AllocatedBuffer& buffer) const {
  if (buffer.coherent || !buffer.mapped) return;
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = buffer.memory.get();
  range.offset = 0;
  range.size = VK_WHOLE_SIZE;  // the whole mapping: no nonCoherentAtomSize rounding to get wrong
  device_.check(device_.table().vkInvalidateMappedMemoryRanges(device_.get(), 1, &range),
                "vkInvalidateMappedMemoryRanges");
}

std::optional<AllocatedBuffer> MemoryAllocator::import_host(const void* base, uint64_t bytes,
                                                            const char* debug_name) const {
  device_.check_alive("a host range's import");
  const VkDevice dev = device_.get();
  const auto& t = device_.table();
  // The Vulkan struct takes a non-const pointer; the engine imports read-only inputs too, and binds their
  // buffers only as the source of copies: nothing writes them.
  void* pointer = const_cast<void*>(base);
  VkMemoryHostPointerPropertiesEXT pointer_props{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  if (t.vkGetMemoryHostPointerPropertiesEXT(dev, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, pointer,
                                            &pointer_props) != VK_SUCCESS ||
      pointer_props.memoryTypeBits == 0) {
    return std::nullopt;
  }
  AllocatedBuffer out;
  out.size = bytes;
  VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  VkMemoryRequirements req;
  out.buffer = make_buffer(bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, &external, req);
  const VkBuffer buffer = out.buffer.get();
  // Coherent: the host reads what the device copied into the caller's pages without an invalidation, which
  // needs a mapping the import does not make.
  const uint32_t type = find_type(req.memoryTypeBits & pointer_props.memoryTypeBits, kHostMapped, rank_download);
  if (type == kNoType || req.size > bytes) return std::nullopt;

  VkImportMemoryHostPointerInfoEXT import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
  import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  import.pHostPointer = pointer;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &import};
  alloc.allocationSize = bytes;
  alloc.memoryTypeIndex = type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const VkResult r = t.vkAllocateMemory(dev, &alloc, nullptr, &memory);
  if (r == VK_ERROR_DEVICE_LOST) device_.check(r, "vkAllocateMemory");
  if (r != VK_SUCCESS) return std::nullopt;  // refused (pages it cannot pin, out of memory): staging instead
  out.memory = DeviceHandle<VkDeviceMemory>(t, dev, memory);
  device_.check(t.vkBindBufferMemory(dev, buffer, memory, 0), "vkBindBufferMemory");
  instance_.set_name(dev, VK_OBJECT_TYPE_BUFFER, reinterpret_cast<uint64_t>(buffer), debug_name);
  return out;
}

}  // namespace vkgemm::vk
