#include "vk/submitter.hpp"

#include <chrono>

#include <fmt/format.h>

#include "vk/check.hpp"

namespace vkgemm::vk {

Submitter::Submitter(const Device& device) : device_(device) {
  const auto& t = device.table();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = device.queue_family();
  VkCommandPool pool = VK_NULL_HANDLE;
  check(t.vkCreateCommandPool(device.get(), &pool_info, nullptr, &pool), "vkCreateCommandPool");
  pool_ = DeviceHandle<VkCommandPool>(t, device.get(), pool);

  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  check(t.vkAllocateCommandBuffers(device.get(), &alloc, &cmd_), "vkAllocateCommandBuffers");

  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  check(t.vkCreateFence(device.get(), &fence_info, nullptr, &fence), "vkCreateFence");
  fence_ = DeviceHandle<VkFence>(t, device.get(), fence);
}

double Submitter::run(const std::function<void(VkCommandBuffer)>& record, const SubmitSync* sync) {
  const auto& t = device_.table();
  check(t.vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(t.vkBeginCommandBuffer(cmd_, &begin), "vkBeginCommandBuffer");
  try {
    record(cmd_);
  } catch (...) {
    t.vkEndCommandBuffer(cmd_);
    throw;
  }
  check(t.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");

  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd_;
  if (sync) {
    if (sync->wait_stages.size() != sync->wait_semaphores.size()) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("submit: {} wait semaphores but {} wait stages; give one stage mask per semaphore",
                              sync->wait_semaphores.size(), sync->wait_stages.size()));
    }
    submit.waitSemaphoreCount = static_cast<uint32_t>(sync->wait_semaphores.size());
    submit.pWaitSemaphores = sync->wait_semaphores.data();
    submit.pWaitDstStageMask = sync->wait_stages.data();
    submit.signalSemaphoreCount = static_cast<uint32_t>(sync->signal_semaphores.size());
    submit.pSignalSemaphores = sync->signal_semaphores.data();
  }
  VkFence fence = fence_.get();
  check(t.vkResetFences(device_.get(), 1, &fence), "vkResetFences");
  const auto start = std::chrono::steady_clock::now();
  check(t.vkQueueSubmit(device_.queue(), 1, &submit, fence), "vkQueueSubmit");
  if (sync && sync->fence != VK_NULL_HANDLE) {
    // The application's fence signals when this batch is done: an empty submission after it on the same
    // queue completes only after it (submission order).
    check(t.vkQueueSubmit(device_.queue(), 0, nullptr, sync->fence), "vkQueueSubmit (the application's fence)");
  }
  check(t.vkWaitForFences(device_.get(), 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace vkgemm::vk
