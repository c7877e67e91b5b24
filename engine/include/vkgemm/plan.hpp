// Plans: a GEMM planned once on an Engine and recorded (or run) many times, as cuBLASLt's matmul plans,
// VkFFT's applications and CUTLASS's operators separate planning from running.
//
//   vkgemm::GemmPlan plan = engine.plan(desc, {.gemm = {.kernel = vkgemm::Kernel::automatic}});
//   plan.record(cmd, a, b, c);          // every frame: no allocation, no Vulkan object created
//   engine.run(plan, a, b, c);          // or submitted on the engine's queue and waited for
//
// Engine::plan checks the call (GemmDesc and the options), chooses the kernel and configuration, cuts the
// product into pieces where the device's limits require it, builds the pipelines, and creates what a
// recording needs: the workspace (split-K sums, a turned 8-bit B), timestamp queries when asked, and, on a device without push
// descriptors, a ring of descriptor sets. GemmPlan::record then only writes descriptors and records commands.
//
// Descriptors: where the device has VK_KHR_push_descriptor (DeviceInfo::push_descriptor; an adopted device
// where the application enabled it), record pushes each dispatch's bindings into the command buffer
// (vkCmdPushDescriptorSetKHR): no descriptor set, so no limit on pending recordings. Elsewhere the plan owns
// a ring of GemmPlanOptions::max_pending slots of descriptor sets, and each record rewrites the next slot.
//
// Operand offsets: a plan is made for operands at the byte offsets GemmPlanOptions names (0 by default) and
// records operands at any offset congruent to those modulo offset_granularity() (minStorageBufferOffsetAlignment
// rounded up to 64 bytes): such a shift moves every descriptor binding by the same aligned amount and leaves
// the push constants, the vec4 paths and the pieces as planned. Another offset is refused by record (with the
// congruence it needed): make a plan for it.
//
// Lifetime: a GemmPlan must not outlive its Engine's device, but using it after its Engine is gone is a checked
// error, not undefined behaviour: the engine releases the Vulkan objects of every live plan when it is
// destroyed, and record, run and timing then throw Error(invalid_argument, "... its engine was destroyed").
// The recorded commands use the plan's pipelines, workspace, queries and descriptor sets (the ring's): destroy
// a plan (or its engine) only after the submissions of the command buffers it was recorded into have completed.
//
// Threads: record takes no lock. Different plans may be recorded by different threads at once (on one
// engine too); one plan is recorded by one thread at a time (as a VkCommandPool is used).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <vulkan/vulkan_core.h>

#include "vkgemm/blas.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/options.hpp"

namespace vkgemm {

// A range of a VkBuffer holding a GEMM operand: `size` is how many bytes from `offset` the engine may
// touch (at most the buffer's size minus offset). The buffer needs VK_BUFFER_USAGE_STORAGE_BUFFER_BIT and
// must live until every submission using it completes.
struct VulkanBufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
};

struct GemmPlanOptions {
  GemmOptions gemm;  // the kernel and its configuration, repeat and warmup (each record records them all)
  // The byte offsets the operands will be recorded at (see "Operand offsets" above).
  uint64_t a_offset = 0, b_offset = 0, c_offset = 0;
  uint64_t bias_offset = 0;  // the epilogue's bias (GemmDesc::epilogue), where it has one
  // Timestamps around each timed product (GemmPlan::timing reads the last completed recording's). Off by
  // default: a plan recorded every frame needs none. Ignored where the queue has no timestamps.
  bool timestamps = false;
  // The ring only (a device without push descriptors, DeviceInfo::push_descriptor false): how many
  // recordings of this plan may be pending (recorded, their submission not yet complete) at once, the size of
  // the plan's descriptor-set ring. Recording more than this before the oldest completes rewrites descriptor
  // sets in use (validation reports it). With push descriptors it limits nothing (the plan has no sets).
  // 1 to 64 on both.
  uint32_t max_pending = 4;
};

namespace detail {
struct GemmPlanState;
struct PlanRegistry;
struct EngineImpl;
}  // namespace detail

// One product submitted by Engine::submit, in flight until it completes. Copyable (a number and a
// reference to the engine). Several may be in flight on one engine; the engine reuses a command buffer
// only after its submission completed (up to 8 in flight; a ninth submit first waits for the oldest), and
// a plan's descriptor sets likewise (max_pending submissions of one plan; none with push descriptors).
// Where the device has timeline semaphores (Vulkan 1.2; an adopted device where the application enabled
// timelineSemaphore and created its instance for 1.2), the engine's one timeline semaphore reaches value()
// when this product has completed: the application may wait on (semaphore(), value()) in its own queue
// submissions (VkTimelineSemaphoreSubmitInfo) or with vkWaitSemaphores. Elsewhere semaphore() is
// VK_NULL_HANDLE and wait()/done() use a fence. Using a handle after its engine is gone throws.
class GemmSubmission {
 public:
  GemmSubmission() noexcept = default;
  bool valid() const noexcept { return value_ != 0; }
  // Blocks until the product completed (no polling: vkWaitSemaphores, or vkWaitForFences).
  void wait() const;
  // Whether it completed, without waiting.
  bool done() const;
  VkSemaphore semaphore() const;
  uint64_t value() const noexcept { return value_; }

 private:
  friend struct detail::Access;
  std::shared_ptr<detail::PlanRegistry> engine_alive_;
  detail::EngineImpl* engine_ = nullptr;
  uint64_t value_ = 0;
};

class GemmPlan {
 public:
  GemmPlan() noexcept;
  ~GemmPlan();
  GemmPlan(GemmPlan&&) noexcept;
  GemmPlan& operator=(GemmPlan&&) noexcept;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  bool valid() const noexcept { return impl_ != nullptr; }
  const GemmDesc& desc() const;
  Kernel kernel() const;              // what runs (auto resolved)
  const std::string& config() const;  // its configuration, and the count of pieces when there are several
  uint64_t offset_granularity() const;

  // Records C = alpha op(A) op(B) + beta C for `desc` into `cmd`, with the barrier contract of record_gemm
  // (vulkan.hpp): nothing before the first dispatch (except, for a plan with a workspace, one
  // compute-to-compute barrier that orders this use of the workspace after the previous one on the queue),
  // barriers between its own dispatches, nothing after the last. Checks the operands (buffer, offset class,
  // size) and throws Error before recording anything; allocates nothing and creates no Vulkan object.
  void record(VkCommandBuffer cmd, const VulkanBufferRange& a, const VulkanBufferRange& b,
              const VulkanBufferRange& c);
  // The same with the epilogue's bias vector (GemmDesc::epilogue: bias_length(desc) elements of its
  // bias_type from bias.offset), which a plan whose desc has a bias needs; a plan without one ignores it.
  void record(VkCommandBuffer cmd, const VulkanBufferRange& a, const VulkanBufferRange& b,
              const VulkanBufferRange& c, const VulkanBufferRange& bias);

  // The GPU times of the last recording's timed products, once its submission completed (timestamps on).
  GemmTiming timing() const;

 private:
  friend struct detail::Access;
  std::shared_ptr<detail::GemmPlanState> impl_;
};

}  // namespace vkgemm
