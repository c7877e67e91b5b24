// Submitter: one command pool, one primary command buffer and a fence; records, submits and waits.
#pragma once

#include <functional>

#include <volk.h>

#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vkgemm/vulkan.hpp"

namespace vkgemm::vk {

class Submitter {
 public:
  explicit Submitter(const Device& device);

  // Records with `record`, submits to the device's queue (waiting on and signalling what `sync` names,
  // when given) and waits. Returns the host wall time in ms from submission until the fence signalled.
  double run(const std::function<void(VkCommandBuffer)>& record, const SubmitSync* sync = nullptr);

 private:
  const Device& device_;
  DeviceHandle<VkCommandPool> pool_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;  // freed with the pool
  DeviceHandle<VkFence> fence_;
};

}  // namespace vkgemm::vk
