// Submitter: a ring of command buffers on one command pool, each submission numbered by a serial that a
// timeline semaphore reaches when it completes (Vulkan 1.2's, where the device has it on), or, without
// one, signalled by its slot's fence. Several submissions may be in flight; a slot is reused once the
// submission that used it last has completed.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include <volk.h>

#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/options.hpp"
#include "vkgemm/vulkan.hpp"

namespace vkgemm::vk {

// How long a wait polls before it sleeps (GemmOptions::wait, options.hpp): `mode`, where automatic the
// engine's `fallback` (VKGEMM_WAIT, else automatic), for a product whose previous submission took `last`
// from submission to completion (negative: none yet). spin: kWaitSpinMicroseconds; sleep: none; automatic:
// none on a CPU device or where `last` exceeded the bound, else the bound.
std::chrono::microseconds wait_spin(WaitMode mode, WaitMode fallback, DeviceType type,
                                    std::chrono::microseconds last = std::chrono::microseconds{-1}) noexcept;

// What the waits did, since the submitter was made: how often polling saw the submission complete, how often
// a wait slept (after polling to its bound, or at once), and how long the latest wait polled. A wait for a
// submission complete before it began counts neither.
struct WaitStats {
  uint64_t woke_polling = 0;
  uint64_t slept = 0;
  std::chrono::nanoseconds last_poll{0};
};

class Submitter {
 public:
  static constexpr size_t kSlots = 8;
  static constexpr size_t kMaxSignals = 16;  // the application's signal semaphores a submission takes

  // timeline: the device has timelineSemaphore on (Vulkan 1.2 core, or VK_KHR_timeline_semaphore).
  // spin: how long wait() polls (the timeline semaphore's value, else the slot's fence) before it blocks in
  // vkWaitSemaphores or vkWaitForFences, where the caller names no bound (wait_spin above: a blocking wait's
  // wake-up costs tens of microseconds on a GPU; a small product is done sooner).
  Submitter(const Device& device, bool timeline, std::chrono::microseconds spin = std::chrono::microseconds{0})
      : Submitter(device, device.queue(), device.queue_family(), timeline, spin) {}
  // The same on another of the device's queues (`family` its family): the copies beside the products.
  Submitter(const Device& device, VkQueue queue, uint32_t family, bool timeline,
            std::chrono::microseconds spin = std::chrono::microseconds{0});

  // Records with `record` (called with the command buffer) into the next slot's command buffer (first
  // waiting for the submission that used it last) and submits it to the device's queue, waiting on and
  // signalling what `sync` names when given. Returns its serial. A template, not a std::function: a
  // capturing lambda would be copied to the heap every call.
  template <typename Record>
  uint64_t submit(Record&& record, const SubmitSync* sync = nullptr) {
    check_sync(sync);
    Slot& slot = next_slot();
    begin(slot.cmd);
    try {
      record(slot.cmd);
    } catch (...) {
      device_.table().vkEndCommandBuffer(slot.cmd);
      throw;
    }
    end(slot.cmd);
    return queue_submit(slot, slot.cmd, sync);
  }
  // Submits `cmd`, recorded by the caller (and not pending: the caller knows its last submission completed),
  // as submit() submits its own, with the next slot's serial (and, without a timeline, its fence).
  uint64_t submit_recorded(VkCommandBuffer cmd, const SubmitSync* sync = nullptr) {
    check_sync(sync);
    return queue_submit(next_slot(), cmd, sync);
  }
  // The host waits until submission `serial` completed; done() asks without waiting. With a timeline both
  // are safe beside submit() on another thread; with fences the caller serializes them with submit().
  void wait(uint64_t serial) { wait(serial, spin_); }
  // The same, polling for up to `spin` first (0: sleep at once).
  void wait(uint64_t serial, std::chrono::microseconds spin);
  bool done(uint64_t serial);
  // Whether submission `serial` completed within `timeout` (0: a look, without waiting); a failure but a
  // timeout throws.
  bool wait_for(uint64_t serial, std::chrono::nanoseconds timeout);
  // The next submission waits on the device, at every stage, until timeline semaphore `semaphore` reaches
  // `value` (another queue's work: a write beside the products, engine/beside.cpp); a second call before it
  // keeps the larger value. The value must belong to a submission already made, so that the wait ends.
  // Needs a timeline here (timeline() not null).
  void wait_before_next(VkSemaphore semaphore, uint64_t value) noexcept;
  // The serial of the latest submission (0: none yet).
  uint64_t last_serial() const noexcept { return next_serial_ - 1; }
  // How many submissions waited so (the tests' view).
  uint64_t device_waits() const noexcept { return device_waits_; }
  WaitStats wait_stats() const noexcept;
  // Waits for every submission still in flight (before what they use is destroyed).
  void wait_all();
  // submit, then wait. Returns the host wall time in ms from submission until completion.
  template <typename Record>
  double run(Record&& record, const SubmitSync* sync = nullptr) {
    wait(submit(std::forward<Record>(record), sync));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - submitted_).count();
  }
  // The timeline semaphore (VK_NULL_HANDLE without one): value `serial` means that submission completed.
  VkSemaphore timeline() const noexcept { return timeline_.get(); }

 private:
  struct Slot {
    VkCommandBuffer cmd = VK_NULL_HANDLE;  // freed with the pool
    DeviceHandle<VkFence> fence;           // without a timeline
    uint64_t serial = 0;                   // the last submission that used it; 0: none
  };
  // Throws unless `sync` (may be null) names one stage mask per wait semaphore and few enough signals.
  static void check_sync(const SubmitSync* sync);
  // The slot of the next serial, once the submission that used it last completed.
  Slot& next_slot();
  void begin(VkCommandBuffer cmd);  // reset and begun for one submission
  void end(VkCommandBuffer cmd);
  // vkQueueSubmit of `cmd` with `slot`'s serial and fence; the application's fence after it where `sync` has one.
  uint64_t queue_submit(Slot& slot, VkCommandBuffer cmd, const SubmitSync* sync);
  // The blocking wait for `serial` (the timeline's value, else its slot's fence): block_once's result, or
  // block's, which throws the failure once the submission completed or the device is lost (submitter.cpp).
  VkResult block_once(uint64_t serial, uint64_t timeout_ns = UINT64_MAX);
  void block(uint64_t serial);

  const Device& device_;
  VkQueue queue_;
  std::chrono::microseconds spin_;
  DeviceHandle<VkCommandPool> pool_;
  DeviceHandle<VkSemaphore> timeline_;
  std::array<Slot, kSlots> slots_;
  uint64_t next_serial_ = 1;
  std::chrono::steady_clock::time_point submitted_;  // of the latest submission, for run()'s time
  // wait_stats()'s counts: atomic, as waits on a timeline may run on several threads at once.
  std::atomic<uint64_t> woke_polling_{0}, slept_{0};
  std::atomic<int64_t> last_poll_ns_{0};
  std::atomic<uint64_t> completed_{0};  // the highest timeline value done() has seen
  VkSemaphore wait_semaphore_ = VK_NULL_HANDLE;  // wait_before_next's, until the next submission takes it
  uint64_t wait_value_ = 0;
  uint64_t device_waits_ = 0;
};

}  // namespace vkgemm::vk
