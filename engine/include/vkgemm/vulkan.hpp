// vkgemm inside an application's own Vulkan: adopt its device, record GEMMs into its command buffers,
// on its buffers. The only vkgemm header that needs Vulkan's types; it includes <vulkan/vulkan_core.h>
// alone (no prototypes are used, so VK_NO_PROTOTYPES builds and volk-based applications work).
//
// Modelled on VulkanMemoryAllocator (VmaAllocatorCreateInfo) for adoption and on VkFFT (VkFFTAppend) for
// recording. The engine loads its own VolkDeviceTable for the adopted device; it never touches the
// application's function pointers, and its copy of volk is private to the library.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include <vulkan/vulkan_core.h>

#include "vkgemm/blas.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/plan.hpp"

namespace vkgemm {

// What an engine needs to work on the application's device. Every handle is borrowed: the engine never
// destroys it, and each must stay valid for the engine's lifetime.
struct VulkanDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  // A queue of a family with VK_QUEUE_COMPUTE_BIT. The engine submits to it only in Engine::write/read,
  // the convenience gemm calls and submit_gemm(); those calls, and the application's own submissions to
  // this queue, must not overlap (Vulkan requires vkQueueSubmit to be externally synchronized per queue).
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family_index = 0;
  // The apiVersion the instance was created with; 1.1 or later.
  uint32_t api_version = VK_API_VERSION_1_1;
  // The loader entry point the application loads with (vkGetInstanceProcAddr, or volk's).
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  // The features enabled at vkCreateDevice (nullptr: none). A kernel needing one that is not enabled is
  // refused with an error naming it (f64 needs shaderFloat64).
  const VkPhysicalDeviceFeatures* enabled_features = nullptr;
  // The VkDeviceCreateInfo::pNext chain the device was created with (nullptr: none), read for the feature
  // structs vkgemm's kernels need, and the device extensions enabled. vkgemm only reads them, during
  // adopt_device. f16 needs shaderFloat16 and storageBuffer16BitAccess (in VkPhysicalDeviceVulkan11/12Features,
  // or VkPhysicalDevice16BitStorageFeatures and VkPhysicalDeviceShaderFloat16Int8Features); the
  // cooperative-matrix kernels need their extension (VK_KHR_cooperative_matrix with cooperativeMatrix;
  // VK_NV_cooperative_matrix2 with workgroup scope, flexible dimensions, tensor addressing and conversions),
  // vulkanMemoryModel, and Vulkan 1.3's maintenance4 (and, for coopmat, subgroupSizeControl and
  // computeFullSubgroups). Plans push their descriptors where VK_KHR_push_descriptor is listed (else each
  // plan keeps a ring of descriptor sets). What is not declared here is taken as off.
  const void* enabled_feature_chain = nullptr;
  std::span<const char* const> enabled_extensions;
};

// An engine on the application's device. No instance, device or queue is created; the engine creates only
// its own pipelines, command pool, fences, descriptor and query pools (destroyed with it). The engine
// must be destroyed before the device, and the device must be idle of the engine's work by then.
// Validation messages about the engine's work go to the application's own messenger (EngineOptions'
// validation is for engines that create their instance). The instance-level functions the engine needs
// are loaded through get_instance_proc_addr, unless this process already loaded libvulkan.so.1 for an
// engine of its own, whose loader then serves both (one loader per process, as usual).
Engine adopt_device(const VulkanDevice& device);

// An engine-owned Buffer as a range (from `offset` to its end), to mix with application buffers.
VulkanBufferRange vulkan_range(const Buffer& buffer, VkDeviceSize offset = 0);

namespace detail {
struct RecordingImpl;
}

// What record_gemm() leaves behind: the plan it recorded (record_gemm plans through the engine's plan cache,
// keyed by the call's description: vkgemm/plan.hpp) and the descriptor sets and timestamp queries the
// recorded commands use.
// Keep it until the submission of that command buffer has completed (its fence signalled, or the queue
// idle); destroying it earlier is an error, as destroying any in-use Vulkan object is. Move-only. It must
// not outlive its Engine.
class GemmRecording {
 public:
  GemmRecording() noexcept;
  ~GemmRecording();
  GemmRecording(GemmRecording&&) noexcept;
  GemmRecording& operator=(GemmRecording&&) noexcept;
  GemmRecording(const GemmRecording&) = delete;
  GemmRecording& operator=(const GemmRecording&) = delete;

  // The GPU times of the timed dispatches, once the submission has completed; throws Error(not_ready)
  // before. gpu_ms is empty (gpu_timestamps false) on a queue family without timestamps.
  GemmTiming timing() const;
  // False for an empty product (m, n or batch 0): nothing was recorded.
  bool recorded() const noexcept;

 private:
  friend struct detail::Access;
  explicit GemmRecording(std::unique_ptr<detail::RecordingImpl> impl) noexcept;
  std::unique_ptr<detail::RecordingImpl> impl_;
};

// Records C = alpha op(A) op(B) + beta C (see blas.hpp) into `cmd` (a GemmPlan from the engine's cache,
// recorded with sets and queries of its own: for a product recorded every frame, make a GemmPlan once and
// record it, which allocates nothing), which the application has begun and
// is outside a render pass, on a queue family with compute. The engine binds its own compute pipeline,
// descriptor set and push constants (the application rebinds its own afterwards, as after any
// vkCmdBindPipeline).
//
// Before: the application makes its writes of A, B and C (C only when beta != 0) available and visible to
// VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT / VK_ACCESS_SHADER_READ_BIT, and orders its earlier reads and writes
// of C before VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT / VK_ACCESS_SHADER_WRITE_BIT (a barrier, or a semaphore).
// Recorded: the dispatches (warmup + repeat products; a product past the device's limits, or with a K
// longer than options.max_k_per_submission, is several dispatches, see engine.hpp), a compute-to-compute
// barrier between consecutive ones (each writes C), a query-pool reset and timestamps around each timed
// product. Nothing else: no barrier before the first dispatch nor after the last.
// After: C is written by VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT with VK_ACCESS_SHADER_WRITE_BIT; A and B are
// read there. The application records the barrier its next use of C (or its next write of A or B) needs.
// Throws vkgemm::Error, recording nothing, when an argument is invalid or the device cannot run the kernel.
// With beta != 0, warmup + repeat must be 1: every dispatch updates C in place.
GemmRecording record_gemm(Engine& engine, VkCommandBuffer cmd, const GemmDesc& desc, const VulkanBufferRange& a,
                          const VulkanBufferRange& b, const VulkanBufferRange& c, const GemmOptions& options = {});

// Optional synchronization for submit_gemm().
struct SubmitSync {
  std::span<const VkSemaphore> wait_semaphores;          // waited on before the GEMM starts
  std::span<const VkPipelineStageFlags> wait_stages;     // one per wait semaphore (compute shader, usually)
  std::span<const VkSemaphore> signal_semaphores;        // signalled when it completes
  VkFence fence = VK_NULL_HANDLE;                        // signalled when it completes (unsignalled on entry)
};

// The convenience on top of record_gemm(): records into the engine's own command buffer with a full
// barrier before (earlier transfers, compute and host writes) and after (for transfers, compute and the
// host), submits to the engine's queue with `sync`, and waits for completion.
GemmTiming submit_gemm(Engine& engine, const GemmDesc& desc, const VulkanBufferRange& a, const VulkanBufferRange& b,
                       const VulkanBufferRange& c, const GemmOptions& options = {}, const SubmitSync& sync = {});

}  // namespace vkgemm
