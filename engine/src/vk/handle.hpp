// DeviceHandle<T>: the RAII owner of one Vulkan object that a VkDevice creates (buffer, memory, pipeline,
// ...). Each object kind is its own type (DeviceHandle<VkBuffer> is not DeviceHandle<VkPipeline>) with its
// destroy call below. Move-only. A handle made with borrow() is never destroyed: it belongs to someone else.
#pragma once

#include <utility>

#include <volk.h>

namespace vkgemm::vk {

template <typename T>
struct Destroyer;

#define VKGEMM_DESTROYER(Type, call)                                              \
  template <>                                                                     \
  struct Destroyer<Type> {                                                        \
    static void destroy(const VolkDeviceTable& t, VkDevice device, Type handle) { \
      t.call(device, handle, nullptr);                                            \
    }                                                                             \
  };
VKGEMM_DESTROYER(VkBuffer, vkDestroyBuffer)
VKGEMM_DESTROYER(VkDeviceMemory, vkFreeMemory)
VKGEMM_DESTROYER(VkShaderModule, vkDestroyShaderModule)
VKGEMM_DESTROYER(VkPipeline, vkDestroyPipeline)
VKGEMM_DESTROYER(VkPipelineLayout, vkDestroyPipelineLayout)
VKGEMM_DESTROYER(VkPipelineCache, vkDestroyPipelineCache)
VKGEMM_DESTROYER(VkDescriptorSetLayout, vkDestroyDescriptorSetLayout)
VKGEMM_DESTROYER(VkDescriptorPool, vkDestroyDescriptorPool)
VKGEMM_DESTROYER(VkCommandPool, vkDestroyCommandPool)
VKGEMM_DESTROYER(VkFence, vkDestroyFence)
VKGEMM_DESTROYER(VkQueryPool, vkDestroyQueryPool)
VKGEMM_DESTROYER(VkSemaphore, vkDestroySemaphore)
VKGEMM_DESTROYER(VkEvent, vkDestroyEvent)
#undef VKGEMM_DESTROYER

template <typename T>
class DeviceHandle {
 public:
  DeviceHandle() noexcept = default;
  DeviceHandle(const VolkDeviceTable& table, VkDevice device, T handle) noexcept
      : table_(&table), device_(device), handle_(handle), owned_(true) {}
  static DeviceHandle borrow(T handle) noexcept {
    DeviceHandle h;
    h.handle_ = handle;
    return h;
  }

  ~DeviceHandle() { reset(); }
  DeviceHandle(DeviceHandle&& other) noexcept { *this = std::move(other); }
  DeviceHandle& operator=(DeviceHandle&& other) noexcept {
    if (this != &other) {
      reset();
      table_ = std::exchange(other.table_, nullptr);
      device_ = std::exchange(other.device_, VK_NULL_HANDLE);
      handle_ = std::exchange(other.handle_, VK_NULL_HANDLE);
      owned_ = std::exchange(other.owned_, false);
    }
    return *this;
  }
  DeviceHandle(const DeviceHandle&) = delete;
  DeviceHandle& operator=(const DeviceHandle&) = delete;

  T get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != VK_NULL_HANDLE; }
  bool owned() const noexcept { return owned_; }

  void reset() noexcept {
    if (owned_ && handle_ != VK_NULL_HANDLE) Destroyer<T>::destroy(*table_, device_, handle_);
    handle_ = VK_NULL_HANDLE;
    owned_ = false;
  }

 private:
  const VolkDeviceTable* table_ = nullptr;
  VkDevice device_ = VK_NULL_HANDLE;
  T handle_ = VK_NULL_HANDLE;
  bool owned_ = false;
};

}  // namespace vkgemm::vk
