// The Vulkan-facing API (vkgemm/vulkan.hpp): adopting the application's device, recording into its
// command buffers, and submit_gemm() with its semaphores and fence.
#include <fmt/format.h>

#include "engine_impl.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace detail {

EngineImpl::EngineImpl(const VulkanDevice& d) {
  const auto require = [](bool ok, const char* what) {
    if (!ok) throw Error(ErrorCode::invalid_argument, fmt::format("adopt_device: {} is missing", what));
  };
  require(d.instance != VK_NULL_HANDLE, "the VkInstance");
  require(d.physical_device != VK_NULL_HANDLE, "the VkPhysicalDevice");
  require(d.device != VK_NULL_HANDLE, "the VkDevice");
  require(d.queue != VK_NULL_HANDLE, "the VkQueue");
  require(d.get_instance_proc_addr != nullptr, "vkGetInstanceProcAddr");
  if (d.api_version < VK_API_VERSION_1_1) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("adopt_device: the instance was created for Vulkan {}.{}; vkgemm needs 1.1 or later",
                            VK_API_VERSION_MAJOR(d.api_version), VK_API_VERSION_MINOR(d.api_version)));
  }
  instance = std::make_unique<vk::Instance>(d.instance, d.get_instance_proc_addr);
  bool found = false;
  for (auto& p : enumerate_devices(d.instance, d.api_version)) {
    if (p.handle == d.physical_device) physical = std::move(p), found = true;
  }
  require(found, "the VkPhysicalDevice among the instance's devices, so it");

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(d.physical_device, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(d.physical_device, &family_count, families.data());
  if (d.queue_family_index >= family_count || !(families[d.queue_family_index].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("adopt_device: queue family {} of {} has no VK_QUEUE_COMPUTE_BIT; vkgemm needs a queue "
                            "that runs compute shaders", d.queue_family_index, physical.info.name));
  }
  // What this queue and this device (as the application created it) can do, not what the hardware could.
  auto& info = physical.info;
  info.timestamp_valid_bits = families[d.queue_family_index].timestampValidBits;
  info.timestamps = info.timestamp_valid_bits > 0 && info.timestamp_period_ns > 0.0f;
  physical.compute_family = d.queue_family_index;
  info.float64 = info.float64 && d.enabled_features && d.enabled_features->shaderFloat64;
  // VulkanDevice does not say which 1.1+ features and extensions the application enabled, so what needs them
  // is off: f16 (shaderFloat16, 16-bit storage) and the cooperative-matrix kernels. (A way to declare them
  // is follow-up work.)
  info.float16 = info.storage16 = info.subgroup_size_control = false;
  info.coopmat_khr = info.coopmat2 = info.coopmat_nv = false;
  apply_test_limits(info);
  info.pipeline_statistics = false;  // the application's device: its extensions are not known here

  device = std::make_unique<vk::Device>(d.physical_device, d.device, d.queue, d.queue_family_index);
  memory = std::make_unique<vk::MemoryAllocator>(*instance, *device, physical.info);
  submitter = std::make_unique<vk::Submitter>(*device);
  pipelines = std::make_unique<kernels::Pipelines>(*instance, *device);
}

}  // namespace detail

Engine adopt_device(const VulkanDevice& device) {
  return Engine(std::make_unique<detail::EngineImpl>(device));
}

VulkanBufferRange vulkan_range(const Buffer& buffer, VkDeviceSize offset) {
  const detail::BufferImpl* impl = detail::Access::impl(buffer);
  if (!impl) throw Error(ErrorCode::invalid_argument, "vulkan_range: the buffer is empty");
  if (offset > impl->alloc.size) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("vulkan_range: offset {} lies past the end of the {}-byte buffer", offset, impl->alloc.size));
  }
  return {impl->alloc.buffer.get(), offset, impl->alloc.size - offset};
}

GemmRecording::GemmRecording() noexcept = default;
GemmRecording::~GemmRecording() = default;
GemmRecording::GemmRecording(GemmRecording&&) noexcept = default;
GemmRecording& GemmRecording::operator=(GemmRecording&&) noexcept = default;
GemmRecording::GemmRecording(std::unique_ptr<detail::RecordingImpl> impl) noexcept : impl_(std::move(impl)) {}
bool GemmRecording::recorded() const noexcept { return impl_ && impl_->recorded; }
GemmTiming GemmRecording::timing() const {
  if (!impl_) throw Error(ErrorCode::invalid_argument, "gemm timing: this GemmRecording holds no recording");
  return impl_->timing();
}

GemmRecording record_gemm(Engine& engine, VkCommandBuffer cmd, const GemmDesc& desc, const VulkanBufferRange& a,
                          const VulkanBufferRange& b, const VulkanBufferRange& c, const GemmOptions& options) {
  auto& impl = detail::Access::impl(engine);
  std::lock_guard guard(impl.lock);
  return detail::Access::recording(impl.record(cmd, desc, {a, b, c}, options));
}

GemmTiming submit_gemm(Engine& engine, const GemmDesc& desc, const VulkanBufferRange& a, const VulkanBufferRange& b,
                       const VulkanBufferRange& c, const GemmOptions& options, const SubmitSync& sync) {
  auto& impl = detail::Access::impl(engine);
  std::lock_guard guard(impl.lock);
  return impl.submit(desc, {a, b, c}, options, &sync);
}

}  // namespace vkgemm
