// Submitter: a ring of command buffers on one command pool, each submission numbered by a serial that a
// timeline semaphore reaches when it completes (Vulkan 1.2's, where the device has it on), or, without
// one, signalled by its slot's fence. Several submissions may be in flight; a slot is reused once the
// submission that used it last has completed.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>

#include <volk.h>

#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/vulkan.hpp"

namespace vkgemm::vk {

// How long a wait polls before it blocks (Submitter's spin): 200 us on a GPU, none on a CPU device.
inline std::chrono::microseconds wait_spin(DeviceType type) {
  return std::chrono::microseconds{type == DeviceType::cpu ? 0 : 200};
}

class Submitter {
 public:
  static constexpr size_t kSlots = 8;

  // timeline: the device has timelineSemaphore on (Vulkan 1.2 core, or VK_KHR_timeline_semaphore).
  // spin: with a timeline, how long wait() polls the semaphore's value before it blocks in
  // vkWaitSemaphores (a blocking wait's wake-up costs tens of microseconds on a GPU; a small product is done
  // sooner). Zero on a CPU device, whose threads the polling would take from the driver.
  Submitter(const Device& device, bool timeline, std::chrono::microseconds spin = std::chrono::microseconds{0});

  // Records with `record` into the next slot's command buffer (first waiting for the submission that used
  // it last) and submits it to the device's queue, waiting on and signalling what `sync` names when given.
  // Returns its serial.
  uint64_t submit(const std::function<void(VkCommandBuffer)>& record, const SubmitSync* sync = nullptr);
  // The host waits until submission `serial` completed; done() asks without waiting. With a timeline both
  // are safe beside submit() on another thread; with fences the caller serializes them with submit().
  void wait(uint64_t serial);
  bool done(uint64_t serial);
  // Waits for every submission still in flight (before what they use is destroyed).
  void wait_all();
  // submit, then wait. Returns the host wall time in ms from submission until completion.
  double run(const std::function<void(VkCommandBuffer)>& record, const SubmitSync* sync = nullptr);
  // The timeline semaphore (VK_NULL_HANDLE without one): value `serial` means that submission completed.
  VkSemaphore timeline() const noexcept { return timeline_.get(); }

 private:
  struct Slot {
    VkCommandBuffer cmd = VK_NULL_HANDLE;  // freed with the pool
    DeviceHandle<VkFence> fence;           // without a timeline
    uint64_t serial = 0;                   // the last submission that used it; 0: none
  };
  const Device& device_;
  std::chrono::microseconds spin_;
  DeviceHandle<VkCommandPool> pool_;
  DeviceHandle<VkSemaphore> timeline_;
  std::array<Slot, kSlots> slots_;
  uint64_t next_serial_ = 1;
  std::chrono::steady_clock::time_point submitted_;  // of the latest submission, for run()'s time
};

}  // namespace vkgemm::vk
