#include "vk/submitter.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "vk/check.hpp"

namespace vkgemm::vk {

Submitter::Submitter(const Device& device, VkQueue queue, uint32_t family, bool timeline,
                     std::chrono::microseconds spin)
    : device_(device), queue_(queue), spin_(spin) {
  const auto& t = device.table();
  const VkDevice dev = device.get();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = family;
  VkCommandPool pool = VK_NULL_HANDLE;
  device_.check(t.vkCreateCommandPool(dev, &pool_info, nullptr, &pool), "vkCreateCommandPool");
  pool_ = DeviceHandle<VkCommandPool>(t, dev, pool);

  VkCommandBuffer cmds[kSlots];
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = kSlots;
  device_.check(t.vkAllocateCommandBuffers(dev, &alloc, cmds), "vkAllocateCommandBuffers");
  for (size_t i = 0; i < kSlots; ++i) slots_[i].cmd = cmds[i];

  if (timeline) {
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = 0;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    VkSemaphore semaphore = VK_NULL_HANDLE;
    device_.check(t.vkCreateSemaphore(dev, &info, nullptr, &semaphore), "vkCreateSemaphore (timeline)");
    timeline_ = DeviceHandle<VkSemaphore>(t, dev, semaphore);
    return;
  }
  for (Slot& slot : slots_) {
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    device_.check(t.vkCreateFence(dev, &fence_info, nullptr, &fence), "vkCreateFence");
    slot.fence = DeviceHandle<VkFence>(t, dev, fence);
  }
}

std::chrono::microseconds wait_spin(WaitMode mode, WaitMode fallback, DeviceType type,
                                    std::chrono::microseconds last) noexcept {
  constexpr std::chrono::microseconds bound{kWaitSpinMicroseconds}, none{0};
  switch (mode == WaitMode::automatic ? fallback : mode) {
    case WaitMode::spin: return bound;
    case WaitMode::sleep: return none;
    case WaitMode::automatic: break;
  }
  return type == DeviceType::cpu || last > bound ? none : bound;
}

void Submitter::wait(uint64_t serial, std::chrono::microseconds spin) {
  using clock = std::chrono::steady_clock;
  const Slot& slot = slots_[serial % kSlots];
  if (!timeline_ && slot.serial != serial) return;  // the slot moved on: that submission completed before its reuse
  // A poll that fails but by a loss (the driver out of memory) says nothing of the submission, which may still
  // run: the blocking wait below runs all the same, and the poll's error is thrown once the submission
  // completed, so that the caller may release what it used.
  std::optional<Error> poll_failed;
  bool complete = false;
  auto start = clock::now();
  try {
    if (done(serial)) return;  // complete already (a slot's reuse, mostly): neither polled nor slept
    // Polls until done or past the bound, which is checked before each poll: the polling ends at most one
    // poll's time after it.
    start = clock::now();
    const auto until = start + spin;
    while (spin.count() > 0 && !complete && clock::now() < until) complete = done(serial);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::device_lost) throw;
    poll_failed = e;
  }
  last_poll_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count(),
                      std::memory_order_relaxed);
  if (complete) {
    woke_polling_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  slept_.fetch_add(1, std::memory_order_relaxed);
  block(serial);
  if (poll_failed) throw *poll_failed;
}

VkResult Submitter::block_once(uint64_t serial, uint64_t timeout_ns) {
  const auto& t = device_.table();
  if (timeline_) {
    const VkSemaphore semaphore = timeline_.get();
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    info.pSemaphores = &semaphore;
    info.pValues = &serial;
    return t.vkWaitSemaphores(device_.get(), &info, timeout_ns);
  }
  const VkFence fence = slots_[serial % kSlots].fence.get();
  return t.vkWaitForFences(device_.get(), 1, &fence, VK_TRUE, timeout_ns);
}

bool Submitter::wait_for(uint64_t serial, std::chrono::nanoseconds timeout) {
  if (done(serial) || timeout.count() <= 0) return done(serial);
  if (!timeline_ && slots_[serial % kSlots].serial != serial) return true;  // its slot moved on: completed
  const VkResult r = block_once(serial, static_cast<uint64_t>(timeout.count()));
  if (r == VK_TIMEOUT) return false;
  device_.check(r, timeline_ ? "vkWaitSemaphores" : "vkWaitForFences");
  return true;
}

void Submitter::wait_before_next(VkSemaphore semaphore, uint64_t value) noexcept {
  if (wait_semaphore_ != semaphore) wait_value_ = 0;
  wait_semaphore_ = semaphore;
  wait_value_ = std::max(wait_value_, value);
}

void Submitter::block(uint64_t serial) {
  const char* what = timeline_ ? "vkWaitSemaphores" : "vkWaitForFences";
  const VkResult r = block_once(serial);
  if (r == VK_SUCCESS) return;
  if (r != VK_ERROR_DEVICE_LOST) {
    // Not a loss: the submission may still run. Waited for once more before the error is thrown; where that
    // fails too, the engine can no longer tell when its work completes, and takes the device as lost.
    if (block_once(serial) != VK_SUCCESS) device_.lose(what);
  }
  device_.check(r, what);
}

WaitStats Submitter::wait_stats() const noexcept {
  return {woke_polling_.load(std::memory_order_relaxed), slept_.load(std::memory_order_relaxed),
          std::chrono::nanoseconds{last_poll_ns_.load(std::memory_order_relaxed)}};
}

void Submitter::wait_all() {
  for (const Slot& slot : slots_) {
    if (slot.serial) wait(slot.serial);
  }
}

bool Submitter::done(uint64_t serial) {
  const auto& t = device_.table();
  if (timeline_) {
    // A value seen once stays reached (the timeline only grows): a second ask for the same serial, as a
    // slot's reuse or an engine plan's guard makes after the call's own wait, costs no driver call.
    uint64_t seen = completed_.load(std::memory_order_relaxed);
    if (serial <= seen) return true;
    uint64_t value = 0;
    device_.check(t.vkGetSemaphoreCounterValue(device_.get(), timeline_.get(), &value),
                  "vkGetSemaphoreCounterValue");
    while (value > seen && !completed_.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
    }
    return value >= serial;
  }
  const Slot& slot = slots_[serial % kSlots];
  if (slot.serial != serial) return true;
  const VkResult r = t.vkGetFenceStatus(device_.get(), slot.fence.get());
  if (r == VK_NOT_READY) return false;
  device_.check(r, "vkGetFenceStatus");
  return true;
}

void Submitter::check_sync(const SubmitSync* sync) {
  if (!sync) return;
  if (sync->wait_stages.size() != sync->wait_semaphores.size()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("submit: {} wait semaphores but {} wait stages; give one stage mask per semaphore",
                            sync->wait_semaphores.size(), sync->wait_stages.size()));
  }
  if (sync->signal_semaphores.size() > kMaxSignals) {
    throw Error(ErrorCode::invalid_argument, fmt::format("submit: at most {} signal semaphores (got {})", kMaxSignals,
                                                         sync->signal_semaphores.size()));
  }
}

Submitter::Slot& Submitter::next_slot() {
  device_.check_alive("a submission to the device");  // nothing is submitted to a lost device
  Slot& slot = slots_[next_serial_ % kSlots];
  if (slot.serial) wait(slot.serial);
  return slot;
}

void Submitter::begin(VkCommandBuffer cmd) {
  const auto& t = device_.table();
  device_.check(t.vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  device_.check(t.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
}

void Submitter::end(VkCommandBuffer cmd) { device_.check(device_.table().vkEndCommandBuffer(cmd), "vkEndCommandBuffer"); }

uint64_t Submitter::queue_submit(Slot& slot, VkCommandBuffer cmd, const SubmitSync* sync) {
  const auto& t = device_.table();
  const uint64_t serial = next_serial_;
  // The application's signal semaphores (binary: their values are ignored), then the timeline. On the
  // stack: one submission allocates nothing.
  VkSemaphore signals[kMaxSignals + 1];
  uint64_t values[kMaxSignals + 1] = {};
  uint32_t signal_count = 0;
  if (sync) {
    for (VkSemaphore s : sync->signal_semaphores) signals[signal_count++] = s;
  }
  if (timeline_) values[signal_count] = serial, signals[signal_count++] = timeline_.get();
  VkTimelineSemaphoreSubmitInfo timeline_info{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline_info.signalSemaphoreValueCount = signal_count;
  timeline_info.pSignalSemaphoreValues = values;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO, timeline_ ? &timeline_info : nullptr};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  if (sync) {
    submit.waitSemaphoreCount = static_cast<uint32_t>(sync->wait_semaphores.size());
    submit.pWaitSemaphores = sync->wait_semaphores.data();
    submit.pWaitDstStageMask = sync->wait_stages.data();
  }
  // wait_before_next's semaphore after the application's (theirs binary: their values are ignored). Heap
  // arrays only then: one submission after a write beside.
  std::vector<VkSemaphore> waits;
  std::vector<VkPipelineStageFlags> stages;
  std::vector<uint64_t> wait_values;
  if (wait_semaphore_ != VK_NULL_HANDLE) {
    waits.assign(submit.pWaitSemaphores, submit.pWaitSemaphores + submit.waitSemaphoreCount);
    stages.assign(submit.pWaitDstStageMask, submit.pWaitDstStageMask + submit.waitSemaphoreCount);
    wait_values.assign(waits.size(), 0);
    waits.push_back(wait_semaphore_), stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
    wait_values.push_back(wait_value_);
    submit.waitSemaphoreCount = static_cast<uint32_t>(waits.size());
    submit.pWaitSemaphores = waits.data(), submit.pWaitDstStageMask = stages.data();
    timeline_info.waitSemaphoreValueCount = submit.waitSemaphoreCount;
    timeline_info.pWaitSemaphoreValues = wait_values.data();
  }
  submit.signalSemaphoreCount = signal_count;
  submit.pSignalSemaphores = signals;
  VkFence fence = slot.fence.get();
  if (fence) device_.check(t.vkResetFences(device_.get(), 1, &fence), "vkResetFences");
  submitted_ = std::chrono::steady_clock::now();
  device_.check(t.vkQueueSubmit(queue_, 1, &submit, fence), "vkQueueSubmit");
  if (wait_semaphore_ != VK_NULL_HANDLE) wait_semaphore_ = VK_NULL_HANDLE, wait_value_ = 0, ++device_waits_;
  slot.serial = serial;
  ++next_serial_;
  if (sync && sync->fence != VK_NULL_HANDLE) {
    // The application's fence signals when this batch is done: an empty submission after it on the same
    // queue completes only after it (submission order).
    const VkResult r = t.vkQueueSubmit(queue_, 0, nullptr, sync->fence);
    // The batch itself was submitted: it completes before the error reaches the caller, who may then
    // release what it uses.
    if (r != VK_SUCCESS && r != VK_ERROR_DEVICE_LOST) block(serial);
    device_.check(r, "vkQueueSubmit (the application's fence)");
  }
  return serial;
}

}  // namespace vkgemm::vk
