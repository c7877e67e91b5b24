// The engine's private state, shared by engine.cpp (set-up, buffers, transfers), adopt.cpp (the
// application's device), record.cpp (recording a GEMM) and gemm.cpp (the submit-and-wait conveniences).
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "device/device_query.hpp"
#include "kernels/registry.hpp"
#include "kernels/pipelines.hpp"
#include "plan/planner.hpp"
#include "tuning/tuning_table.hpp"
#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vk/instance.hpp"
#include "vk/memory.hpp"
#include "vk/submitter.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/vulkan.hpp"

namespace vkgemm::detail {

struct BufferImpl {
  vk::AllocatedBuffer alloc;
  const EngineImpl* owner = nullptr;
};

// What a GemmRecording keeps alive until the application's submission completes.
struct RecordingImpl {
  const EngineImpl* engine = nullptr;
  vk::DeviceHandle<VkDescriptorPool> descriptors;  // holds the sets the dispatches bind, one or two a piece
  vk::DeviceHandle<VkQueryPool> queries;           // 2 timestamps per timed dispatch, when the queue has them
  Buffer workspace;                                // split-K partial sums, when the plan splits K (shared
                                                   // by the pieces, which run one after another)
  Kernel kernel = Kernel::automatic;               // what ran, for GemmTiming
  std::string config;
  uint32_t repeat = 0;
  bool recorded = false;
  GemmTiming timing() const;
};

struct EngineImpl {
  explicit EngineImpl(const EngineOptions& options);
  explicit EngineImpl(const VulkanDevice& adopted);

  Buffer create_buffer(uint64_t bytes, std::string_view name);
  void write(Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);
  void read(const Buffer& buffer, uint64_t offset, void* data, uint64_t bytes);
  void fill(Buffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word);

  // The checks at an entry, each made once per call: the run options (repeat, warmup) and the operands'
  // buffers (present, aligned, large enough). Throw vkgemm::Error.
  void check_run(const GemmDesc& desc, const GemmOptions& options) const;
  void check_buffers(const GemmDesc& desc, const VulkanBufferRange (&ops)[3], const kernels::Types& types) const;
  // plan_product for operands at `ops` on this engine's device (which checks the kernel is supported).
  ProductPlan plan_call(const GemmDesc& desc, const VulkanBufferRange (&ops)[3], const GemmOptions& options) const;
  // Every check of a call on Vulkan buffers, in order (arguments, run options, kernel, buffers), and its plan.
  ProductPlan checked_plan(const GemmDesc& desc, const VulkanBufferRange (&ops)[3], const GemmOptions& options) const;
  // record_gemm (vulkan.hpp): checked_plan, then record_plan.
  std::unique_ptr<RecordingImpl> record(VkCommandBuffer cmd, const GemmDesc& desc, const VulkanBufferRange (&ops)[3],
                                        const GemmOptions& options);
  // Records a plan into `cmd` as it is, checking nothing: its workspace, descriptor sets, timestamps and
  // dispatches (repeat and warmup from options).
  std::unique_ptr<RecordingImpl> record_plan(VkCommandBuffer cmd, const ProductPlan& plan,
                                             const VulkanBufferRange (&ops)[3], const GemmOptions& options);
  // submit_gemm (vulkan.hpp): checked_plan, then submit_plan.
  GemmTiming submit(const GemmDesc& desc, const VulkanBufferRange (&ops)[3], const GemmOptions& options,
                    const SubmitSync* sync);
  // record_plan into the engine's command buffer between full barriers, submitted with `sync`, waited for.
  GemmTiming submit_plan(const ProductPlan& plan, const VulkanBufferRange (&ops)[3], const GemmOptions& options,
                         const SubmitSync* sync);
  // Whether options.max_k_per_submission cuts this call into K chunks submitted one by one.
  static bool chunked(const GemmDesc& desc, const GemmOptions& options);
  // One submission per K chunk, each planned and waited for.
  GemmTiming submit_k_chunks(const GemmDesc& desc, const VulkanBufferRange (&ops)[3], const GemmOptions& options);
  GemmTiming gemm(const GemmDesc& desc, const BufferOffset (&ops)[3], const GemmOptions& options);
  GemmTiming gemm(const MatrixRef& a, const MatrixRef& b, const MatrixRef& c, const GemmOptions& options);
  GemmTiming gemm_host(const GemmDesc& desc, const void* a, const void* b, void* c, const GemmOptions& options);
  // The driver's statistics of the pipelines gemm(desc, ..., options) runs (statistics.cpp).
  PipelineReport pipeline_statistics(const GemmDesc& desc, const GemmOptions& options);

  // Throws unless `buffer` is a live buffer of this engine.
  const BufferImpl& owned(const Buffer& buffer, const char* what) const;

  // Every public call holds it: one engine may be shared by threads, its calls run one at a time.
  // Recursive because the conveniences call the other members.
  mutable std::recursive_mutex lock;

  // Declaration order is destruction order in reverse: everything below `device` dies before it.
  vk::ValidationSink sink;
  tuning::Table tuning;
  std::unique_ptr<vk::Instance> instance;
  PhysicalDevice physical;
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<vk::MemoryAllocator> memory;
  std::unique_ptr<vk::Submitter> submitter;
  std::unique_ptr<kernels::Pipelines> pipelines;
  std::optional<vk::AllocatedBuffer> staging;
  Buffer host_a, host_b, host_c;  // reused by the host-memory gemm, grown on demand
};

// Reaches the private parts of the public classes.
struct Access {
  static EngineImpl& impl(Engine& e) { return *e.impl_; }
  static const BufferImpl* impl(const Buffer& b) { return b.impl_.get(); }
  static GemmRecording recording(std::unique_ptr<RecordingImpl> r) { return GemmRecording(std::move(r)); }
};

// One global memory barrier from `src` stages/accesses to `dst` ones.
void memory_barrier(const VolkDeviceTable& t, VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                    VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

}  // namespace vkgemm::detail
