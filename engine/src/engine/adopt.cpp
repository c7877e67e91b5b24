// The Vulkan-facing API (vkgemm/vulkan.hpp): adopting the application's device, recording into its
// command buffers, and submit_gemm() with its semaphores and fence.
#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "engine/environment.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace detail {
namespace {

// The features and extensions of VulkanDevice's chain and list that vkgemm's kernels use.
struct Declared {
  bool float16 = false, storage16 = false, storage8 = false, memory_model = false, subgroup_size_control = false;
  bool memory_model_device_scope = false;
  bool maintenance4 = false, coopmat_khr = false, coopmat2 = false, timeline = false, push_descriptor = false;
  bool host_import = false;
  bool host_query_reset = false, int8 = false, integer_dot = false, bfloat16 = false, bfloat16_coopmat = false;
};

bool has(std::span<const char* const> list, std::string_view name) {
  return std::any_of(list.begin(), list.end(), [&](const char* e) { return e && name == e; });
}

// What the application's feature chain turns on, read struct by struct.
struct Chain {
  Declared out;
  bool khr_feature = false, nv2_feature = false, full_subgroups = false, size_control = false;
};

// A core Vulkan features struct into `c`; false for any other struct.
bool read_core_features(const VkBaseInStructure* s, Chain& c) {
  switch (s->sType) {
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
      c.out.storage16 |= reinterpret_cast<const VkPhysicalDeviceVulkan11Features*>(s)->storageBuffer16BitAccess;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
      c.out.storage16 |= reinterpret_cast<const VkPhysicalDevice16BitStorageFeatures*>(s)->storageBuffer16BitAccess;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
      const auto* f = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
      c.out.float16 |= f->shaderFloat16 == VK_TRUE;
      c.out.storage8 |= f->storageBuffer8BitAccess == VK_TRUE;
      c.out.memory_model |= f->vulkanMemoryModel == VK_TRUE;
      c.out.memory_model_device_scope |= f->vulkanMemoryModelDeviceScope == VK_TRUE;
      c.out.timeline |= f->timelineSemaphore == VK_TRUE;
      c.out.host_query_reset |= f->hostQueryReset == VK_TRUE;
      c.out.int8 |= f->shaderInt8 == VK_TRUE;
      break;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
      c.out.storage8 |= reinterpret_cast<const VkPhysicalDevice8BitStorageFeatures*>(s)->storageBuffer8BitAccess == VK_TRUE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES:
      c.out.host_query_reset |= reinterpret_cast<const VkPhysicalDeviceHostQueryResetFeatures*>(s)->hostQueryReset == VK_TRUE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
      c.out.timeline |= reinterpret_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(s)->timelineSemaphore == VK_TRUE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES:
      c.out.float16 |= reinterpret_cast<const VkPhysicalDeviceShaderFloat16Int8Features*>(s)->shaderFloat16 == VK_TRUE;
      c.out.int8 |= reinterpret_cast<const VkPhysicalDeviceShaderFloat16Int8Features*>(s)->shaderInt8 == VK_TRUE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES:
      c.out.memory_model |=
          reinterpret_cast<const VkPhysicalDeviceVulkanMemoryModelFeatures*>(s)->vulkanMemoryModel == VK_TRUE;
      c.out.memory_model_device_scope |= reinterpret_cast<const VkPhysicalDeviceVulkanMemoryModelFeatures*>(s)
                                              ->vulkanMemoryModelDeviceScope == VK_TRUE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES: {
      const auto* f = reinterpret_cast<const VkPhysicalDeviceVulkan13Features*>(s);
      c.size_control |= f->subgroupSizeControl == VK_TRUE;
      c.full_subgroups |= f->computeFullSubgroups == VK_TRUE;
      c.out.maintenance4 |= f->maintenance4 == VK_TRUE;
      c.out.integer_dot |= f->shaderIntegerDotProduct == VK_TRUE;
      break;
    }
    default:
      return false;
  }
  return true;
}

// An extension's features struct (bfloat16, cooperative matrices) into `c`; false for any other struct.
bool read_extension_features(const VkBaseInStructure* s, [[maybe_unused]] Chain& c) {
  switch (s->sType) {
#if defined(VK_KHR_shader_bfloat16)
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR: {
      const auto* f = reinterpret_cast<const VkPhysicalDeviceShaderBfloat16FeaturesKHR*>(s);
      c.out.bfloat16 |= f->shaderBFloat16Type == VK_TRUE;
      c.out.bfloat16_coopmat |= f->shaderBFloat16CooperativeMatrix == VK_TRUE;
      break;
    }
#endif
#if defined(VK_KHR_cooperative_matrix)
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR:
      c.khr_feature |= reinterpret_cast<const VkPhysicalDeviceCooperativeMatrixFeaturesKHR*>(s)->cooperativeMatrix;
      break;
#endif
#if defined(VK_NV_cooperative_matrix2)
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV: {
      const auto* f = reinterpret_cast<const VkPhysicalDeviceCooperativeMatrix2FeaturesNV*>(s);
      c.nv2_feature |= f->cooperativeMatrixWorkgroupScope && f->cooperativeMatrixFlexibleDimensions &&
                     f->cooperativeMatrixTensorAddressing && f->cooperativeMatrixConversions &&
                     f->cooperativeMatrixPerElementOperations;
      break;
    }
#endif
    default:
      return false;
  }
  return true;
}

Declared declared(const VulkanDevice& d) {
  Chain c;
  for (auto* s = static_cast<const VkBaseInStructure*>(d.enabled_feature_chain); s; s = s->pNext) {
    if (!read_core_features(s, c)) read_extension_features(s, c);  // else a struct vkgemm does not need
  }
  Declared out = c.out;
  out.subgroup_size_control = c.size_control && c.full_subgroups;
#if defined(VK_KHR_cooperative_matrix)
  out.coopmat_khr = c.khr_feature && has(d.enabled_extensions, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
#endif
#if defined(VK_NV_cooperative_matrix2)
  out.coopmat2 = c.nv2_feature && has(d.enabled_extensions, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
#endif
  out.push_descriptor = has(d.enabled_extensions, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  out.host_import = has(d.enabled_extensions, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
#if defined(VK_KHR_shader_bfloat16)
  const bool bf16_extension = has(d.enabled_extensions, VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  out.bfloat16 = out.bfloat16 && bf16_extension;
  out.bfloat16_coopmat = out.bfloat16_coopmat && bf16_extension;
#endif
  return out;
}

}  // namespace

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
  device_reason = "adopted: the application's own device (adopt_device)";

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
  // What the application enabled, not what the hardware has: only features and extensions it declared.
  const Declared on = declared(d);
  info.float16 = info.float16 && on.float16;
  info.storage16 = info.storage16 && on.storage16;
  info.storage8 = info.storage8 && on.storage8;
  info.vulkan_memory_model = info.vulkan_memory_model && on.memory_model;
  info.vulkan_memory_model_device_scope =
      info.vulkan_memory_model && info.vulkan_memory_model_device_scope && on.memory_model_device_scope;
  info.subgroup_size_control = info.subgroup_size_control && on.subgroup_size_control;
  info.int8 = info.int8 && on.int8;
  info.integer_dot = info.integer_dot && on.integer_dot;
  info.bfloat16 = info.bfloat16 && on.bfloat16;
  info.bfloat16_coopmat = info.bfloat16_coopmat && info.bfloat16 && on.bfloat16_coopmat;
  const bool matrices = info.vulkan13 && on.maintenance4 && info.vulkan_memory_model;
  info.coopmat_khr = info.coopmat_khr && on.coopmat_khr && matrices && info.subgroup_size_control;
  info.coopmat2 = info.coopmat2 && on.coopmat2 && matrices;
  info.coopmat_nv = false;
  info.push_descriptor = info.push_descriptor && on.push_descriptor;
  info.host_import = info.host_import && on.host_import;
  info.copy_queues = 0;  // the application's queue is the engine's only one
  info.host_query_reset = info.host_query_reset && on.host_query_reset && d.api_version >= VK_API_VERSION_1_2;
  apply_test_limits(info);
  info.pipeline_statistics = false;  // the application's device: its extensions are not known here

  // Timeline semaphores where the application enabled them (core in 1.2; the extension's struct is the
  // same feature): its functions are core names, so a 1.2 instance is needed too.
  const bool timeline = on.timeline && d.api_version >= VK_API_VERSION_1_2;
  device = std::make_unique<vk::Device>(d.physical_device, d.device, d.queue, d.queue_family_index, timeline);
  memory = std::make_unique<vk::MemoryAllocator>(*instance, *device, physical.info);
  buffer_pool = std::make_unique<BufferPool>(physical.info.device_local_memory);
  default_wait = environment_wait_mode();
  submitter = std::make_unique<vk::Submitter>(*device, timeline,
                                              vk::wait_spin(WaitMode::automatic, default_wait, physical.info.type));
  pipelines = std::make_unique<kernels::Pipelines>(*instance, *device, false, info.push_descriptor);
  host_copies = std::make_unique<HostCopies>(*device, *memory, *submitter, physical.info, environment_host_copies());
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
