// Device: the owned VkDevice with one compute queue, the features vkgemm's kernels use, and its own
// function table (VolkDeviceTable), so no global device function pointer is ever written.
#pragma once

#include <volk.h>

#include <atomic>
#include <span>

#include "vk/physical_device.hpp"

namespace vkgemm::vk {

class Device {
 public:
  explicit Device(const PhysicalDevice& physical);
  // The application's device and queue, borrowed: never destroyed nor waited on; the table is our own.
  // timeline: the application enabled timelineSemaphore.
  Device(VkPhysicalDevice physical, VkDevice borrowed, VkQueue queue, uint32_t family, bool timeline);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  VkDevice get() const noexcept { return device_; }
  VkPhysicalDevice physical() const noexcept { return physical_; }
  const VolkDeviceTable& table() const noexcept { return table_; }
  VkQueue queue() const noexcept { return queue_; }
  uint32_t queue_family() const noexcept { return family_; }
  // The queues of the copies beside the products (docs/design/host-copies.md), 0 for uploads and 1 for
  // downloads: the transfer-only family's (the same one where it has a single queue), else the compute
  // queue; and their family.
  VkQueue copy_queue(uint32_t i) const noexcept { return copy_queues_[i]; }
  uint32_t copy_family() const noexcept { return copy_family_; }
  // The distinct families of the queues above (one or two): a buffer both use is shared between them.
  std::span<const uint32_t> families() const noexcept { return {families_, family_count_}; }
  // timelineSemaphore is on (the engine's own device: wherever Vulkan 1.3 is spoken, where it is required).
  bool timeline() const noexcept { return timeline_; }

  // A lost device stays lost (a GPU reset by its driver's watchdog; VK_ERROR_DEVICE_LOST): vk::check of a
  // result from this device, noting a loss, so that every later call of the engine says so (check_alive)
  // rather than reaching a device whose results are undefined.
  void check(VkResult result, const char* what) const;
  // Throws ErrorCode::device_lost, naming `what` and the call that saw the loss, once the device was lost.
  void check_alive(const char* what) const;
  // Takes the device as lost from now on, `what` the call that found it so (the first such call is kept).
  void lose(const char* what) const noexcept;

 private:
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VolkDeviceTable table_{};
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkQueue copy_queues_[2] = {};
  uint32_t copy_family_ = 0;
  uint32_t families_[2] = {};
  uint32_t family_count_ = 1;
  bool owned_ = true;
  bool timeline_ = false;
  // The call that first saw the loss (a string literal), null while the device works.
  mutable std::atomic<const char*> lost_at_{nullptr};
};

}  // namespace vkgemm::vk
