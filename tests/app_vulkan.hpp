// An "application" for the adoption and recording tests: its own instance (validation with synchronization
// validation; any message fails the running test), device and queue, loaded through its own volk (compiled
// into the test binary, beside vkgemm's private copy), and host-visible buffers it owns.
#pragma once

#include <volk.h>

#include <cstdint>
#include <vector>

#include "vkgemm/vulkan.hpp"

namespace vkgemm::test {

struct AppBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
};

class AppVulkan {
 public:
  // shader_float64: enable shaderFloat64 at vkCreateDevice (when the device has it). f16: create the
  // instance for Vulkan 1.2 and enable shaderFloat16, storageBuffer16BitAccess, timelineSemaphore and hostQueryReset (when
  // the device has them), declared to vkgemm through adopt_info's feature chain.
  // device_allocator: the VkAllocationCallbacks given to vkCreateDevice (the driver's device-level
  // allocations, and those of objects created with no allocator of their own, go through it).
  // validation false: no layer (for counting allocations: the layer allocates for its own tracking).
  // host_import: enable VK_EXT_external_memory_host where the device has it (declared in adopt_info), so the
  // engine imports the host's pages on the application's device too.
  explicit AppVulkan(bool shader_float64, bool f16 = false, const VkAllocationCallbacks* device_allocator = nullptr,
                     bool validation = true, bool host_import = false);
  ~AppVulkan();
  AppVulkan(const AppVulkan&) = delete;
  AppVulkan& operator=(const AppVulkan&) = delete;

  VulkanDevice adopt_info() const;
  AppBuffer buffer(VkDeviceSize size, VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
  VkCommandBuffer begin();                 // a fresh primary command buffer, begun
  void submit_and_wait(VkCommandBuffer cmd, VkFence fence = VK_NULL_HANDLE);  // ends, submits, waits idle
  // A barrier from compute writes to compute reads and writes, as the application records between GEMMs.
  static void compute_barrier(VkCommandBuffer cmd);

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkPhysicalDeviceFeatures enabled{};
  VkPhysicalDeviceVulkan11Features enabled11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features enabled12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  uint32_t api_version = VK_API_VERSION_1_1;
  // VK_KHR_push_descriptor, enabled where the device has it and declared to vkgemm in adopt_info (plans then
  // push their descriptors); its maxPushDescriptors, 0 where the device lacks it.
  std::vector<const char*> device_extensions;
  uint32_t max_push_descriptors = 0;

 private:
  void enable_push_descriptor();  // fills device_extensions and max_push_descriptors
  bool offers(const char* extension) const;  // the physical device lists it

  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<AppBuffer> buffers_;
  const VkAllocationCallbacks* device_allocator_ = nullptr;
};

}  // namespace vkgemm::test
