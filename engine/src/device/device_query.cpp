#include "device/device_query.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "device/coopmat_query.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace {

std::string vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x106B: return "Apple";
    case 0x1010: return "Imagination";
    case 0x10005: return "Mesa";
    default: return fmt::format("0x{:04x}", id);
  }
}

std::string decode_driver_version(uint32_t vendor, uint32_t v) {
  if (vendor == 0x10DE) {  // NVIDIA packs 10.8.8.6 bits
    return fmt::format("{}.{}.{}.{}", (v >> 22) & 0x3ffu, (v >> 14) & 0xffu, (v >> 6) & 0xffu, v & 0x3fu);
  }
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

DeviceType to_device_type(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return DeviceType::integrated_gpu;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return DeviceType::discrete_gpu;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return DeviceType::virtual_gpu;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return DeviceType::cpu;
    default: return DeviceType::other;
  }
}

bool has_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t count = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(count);
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, extensions.data()) != VK_SUCCESS) return false;
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const VkExtensionProperties& e) { return std::string_view(e.extensionName) == name; });
}

// VK_KHR_pipeline_executable_properties and its one feature, pipelineExecutableInfo.
bool has_pipeline_executable_info(VkPhysicalDevice pd) {
  if (!has_extension(pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) return false;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR feature{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &feature, {}};
  vkGetPhysicalDeviceFeatures2(pd, &features);
  return feature.pipelineExecutableInfo == VK_TRUE;
}

// Name, driver, limits and the storage offset alignment. Returns the device's own Vulkan version.
uint32_t query_properties(VkPhysicalDevice pd, PhysicalDevice& out) {
  DeviceInfo& info = out.info;
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceFloatControlsProperties floats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maint3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties basic;
  vkGetPhysicalDeviceProperties(pd, &basic);
  const bool v12 = basic.apiVersion >= VK_API_VERSION_1_2;
  subgroup.pNext = &maint3;
  if (v12) maint3.pNext = &driver, driver.pNext = &floats;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &subgroup, {}};
  vkGetPhysicalDeviceProperties2(pd, &props);
  const VkPhysicalDeviceProperties& p = props.properties;

  info.name = p.deviceName;
  info.vendor_id = p.vendorID;
  info.vendor = vendor_name(p.vendorID);
  info.type = to_device_type(p.deviceType);
  info.driver_name = v12 ? driver.driverName : "";
  info.driver_info = v12 ? driver.driverInfo : "";
  info.driver_version = decode_driver_version(p.vendorID, p.driverVersion);
  info.api_version = fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion),
                                 VK_API_VERSION_PATCH(p.apiVersion));
  info.subgroup_size = subgroup.subgroupSize;
  info.max_shared_memory = p.limits.maxComputeSharedMemorySize;
  info.max_workgroup_invocations = p.limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    info.max_workgroup_size[static_cast<size_t>(i)] = p.limits.maxComputeWorkGroupSize[i];
    info.max_workgroup_count[static_cast<size_t>(i)] = p.limits.maxComputeWorkGroupCount[i];
  }
  info.max_storage_buffer_range = p.limits.maxStorageBufferRange;
  info.max_allocation_size = maint3.maxMemoryAllocationSize;
  info.subnormals_on_request = {v12 && floats.shaderDenormPreserveFloat16 == VK_TRUE,
                                v12 && floats.shaderDenormPreserveFloat32 == VK_TRUE,
                                v12 && floats.shaderDenormPreserveFloat64 == VK_TRUE};
  info.timestamp_period_ns = p.limits.timestampPeriod;
  out.storage_offset_alignment = std::max<uint64_t>(1, p.limits.minStorageBufferOffsetAlignment);

  return basic.apiVersion;
}

// The features vkgemm uses: f64, f16, 16- and 8-bit storage, the memory model, subgroup size control.
void query_features(VkPhysicalDevice pd, uint32_t device_version, uint32_t instance_version, DeviceInfo& info) {
  const bool v12 = device_version >= VK_API_VERSION_1_2;
  // 1.3 structs only when the device and the instance (min(loader, 1.3) for vkgemm's own, vk/instance.cpp;
  // the application's when adopted) both speak it.
  info.vulkan13 = device_version >= VK_API_VERSION_1_3 && instance_version >= VK_API_VERSION_1_3;
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                       info.vulkan13 ? &f13 : nullptr};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, v12 ? &f11 : nullptr, {}};
  vkGetPhysicalDeviceFeatures2(pd, &features);
  info.float64 = features.features.shaderFloat64 == VK_TRUE;
  info.float16 = v12 && f12.shaderFloat16 == VK_TRUE;
  info.storage16 = v12 && f11.storageBuffer16BitAccess == VK_TRUE;
  info.storage8 = v12 && f12.storageBuffer8BitAccess == VK_TRUE;
  info.vulkan_memory_model = v12 && f12.vulkanMemoryModel == VK_TRUE;
  info.vulkan_memory_model_device_scope = info.vulkan_memory_model && f12.vulkanMemoryModelDeviceScope == VK_TRUE;
  info.subgroup_size_control = info.vulkan13 && f13.subgroupSizeControl && f13.computeFullSubgroups;
  info.int8 = v12 && f12.shaderInt8 == VK_TRUE;
  info.integer_dot = info.vulkan13 && f13.shaderIntegerDotProduct == VK_TRUE;
  // vkResetQueryPool is a 1.2 core name: the device and the instance must both speak 1.2.
  info.host_query_reset = v12 && instance_version >= VK_API_VERSION_1_2 && f12.hostQueryReset == VK_TRUE;
  if (info.vulkan13) {
    VkPhysicalDeviceVulkan13Properties p13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
    VkPhysicalDeviceProperties2 props13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p13, {}};
    vkGetPhysicalDeviceProperties2(pd, &props13);
    info.min_subgroup_size = p13.minSubgroupSize;
    info.max_subgroup_size = p13.maxSubgroupSize;
  }

}

// The compute units where the device reports them (the planner's wave arithmetic): NVIDIA's SM count,
// AMD's compute units; a CPU device's are its host threads (lavapipe runs one workgroup per thread).
void query_compute_units(VkPhysicalDevice pd, const std::vector<std::string>& extensions, DeviceInfo& info) {
  const auto has = [&](const char* name) { return std::find(extensions.begin(), extensions.end(), name) != extensions.end(); };
  if (has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sm, {}};
    vkGetPhysicalDeviceProperties2(pd, &props);
    info.compute_units = sm.shaderSMCount;
    info.invocations_per_compute_unit = sm.shaderWarpsPerSM * std::max(1u, info.subgroup_size);
    info.compute_units_from = VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME;
  } else if (has(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderCorePropertiesAMD core{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &core, {}};
    vkGetPhysicalDeviceProperties2(pd, &props);
    info.compute_units = core.shaderEngineCount * core.shaderArraysPerEngineCount * core.computeUnitsPerShaderArray;
    info.invocations_per_compute_unit = core.simdPerComputeUnit * core.wavefrontsPerSimd * core.wavefrontSize;
    info.compute_units_from = VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME;
  } else if (info.type == DeviceType::cpu) {
    info.compute_units = std::max(1u, std::thread::hardware_concurrency());
    info.invocations_per_compute_unit = info.max_workgroup_invocations;
    info.compute_units_from = "CPU threads";
  }
}

// VK_KHR_push_descriptor and its limit (its properties struct may only be chained where it is there).
void query_push_descriptor(VkPhysicalDevice pd, const std::vector<std::string>& extensions, DeviceInfo& info) {
  if (std::find(extensions.begin(), extensions.end(), VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == extensions.end()) return;
  VkPhysicalDevicePushDescriptorPropertiesKHR push{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &push, {}};
  vkGetPhysicalDeviceProperties2(pd, &props);
  info.max_push_descriptors = push.maxPushDescriptors;
  info.push_descriptor = push.maxPushDescriptors >= kGemmBindings;  // else the ring: a dispatch binds them all
}

// VK_EXT_external_memory_host, its alignment, and whether a host allocation imports as a transfer buffer.
void query_host_import(VkPhysicalDevice pd, const std::vector<std::string>& extensions, DeviceInfo& info) {
  if (std::find(extensions.begin(), extensions.end(), VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) == extensions.end()) {
    return;
  }
  VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &host, {}};
  vkGetPhysicalDeviceProperties2(pd, &props);
  VkPhysicalDeviceExternalBufferInfo buffer{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
  buffer.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  buffer.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  VkExternalBufferProperties external{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
  vkGetPhysicalDeviceExternalBufferProperties(pd, &buffer, &external);
  info.imported_host_alignment = host.minImportedHostPointerAlignment;
  info.host_import = (external.externalMemoryProperties.externalMemoryFeatures &
                      VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) != 0 && host.minImportedHostPointerAlignment > 0;
}

// VK_KHR_shader_bfloat16's features (its struct may only be chained where the extension is there): bfloat16_t
// in shaders and in cooperative matrices.
void query_bfloat16(VkPhysicalDevice pd, const std::vector<std::string>& extensions, DeviceInfo& info) {
#if defined(VK_KHR_shader_bfloat16)
  if (std::find(extensions.begin(), extensions.end(), VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME) == extensions.end()) return;
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bf16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &bf16, {}};
  vkGetPhysicalDeviceFeatures2(pd, &features);
  info.bfloat16 = bf16.shaderBFloat16Type == VK_TRUE;
  info.bfloat16_coopmat = info.bfloat16 && bf16.shaderBFloat16CooperativeMatrix == VK_TRUE;
#else
  (void)pd, (void)extensions, (void)info;  // Vulkan headers older than VK_KHR_shader_bfloat16
#endif
}

// Extensions (the cooperative matrices, bfloat16, pipeline statistics, push descriptors) and device-local memory.
void query_extensions(VkInstance instance, VkPhysicalDevice pd, DeviceInfo& info) {
  uint32_t extension_count = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &extension_count, nullptr);
  std::vector<VkExtensionProperties> extension_props(extension_count);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &extension_count, extension_props.data());
  std::vector<std::string> extensions;
  for (const auto& e : extension_props) extensions.emplace_back(e.extensionName);
  query_cooperative_matrices(instance, pd, extensions, info);
  query_bfloat16(pd, extensions, info);
  query_compute_units(pd, extensions, info);
  info.pipeline_statistics = has_pipeline_executable_info(pd);
  query_push_descriptor(pd, extensions, info);
  query_host_import(pd, extensions, info);

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.device_local_memory = std::max<uint64_t>(info.device_local_memory, mem.memoryHeaps[i].size);
  }

}

// The compute queue family, preferring one that can write timestamps, and a transfer-only family.
void query_queues(VkPhysicalDevice pd, PhysicalDevice& out) {
  DeviceInfo& info = out.info;
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &family_count, families.data());
  for (uint32_t i = 0; i < family_count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    const bool better = !info.has_compute_queue ||
                        (info.timestamp_valid_bits == 0 && families[i].timestampValidBits > 0);
    if (better) {
      info.has_compute_queue = true;
      out.compute_family = i;
      info.timestamp_valid_bits = families[i].timestampValidBits;
    }
  }
  constexpr VkQueueFlags kEngines = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
  for (uint32_t i = 0; i < family_count && info.copy_queues == 0; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_TRANSFER_BIT) && !(families[i].queueFlags & kEngines)) {
      out.copy_family = i;
      info.copy_queues = families[i].queueCount;
    }
  }
  info.timestamps = info.timestamp_valid_bits > 0 && info.timestamp_period_ns > 0.0f;
}

PhysicalDevice query(VkInstance instance, VkPhysicalDevice pd, uint32_t index, uint32_t instance_version) {
  PhysicalDevice out;
  out.handle = pd;
  out.info.index = index;
  const uint32_t device_version = query_properties(pd, out);
  query_features(pd, device_version, instance_version, out.info);
  query_extensions(instance, pd, out.info);
  query_queues(pd, out);
  return out;
}

}  // namespace

std::vector<PhysicalDevice> enumerate_devices(VkInstance instance, uint32_t instance_version) {
  uint32_t count = 0;
  vk::check(vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(count);
  vk::check(vkEnumeratePhysicalDevices(instance, &count, handles.data()), "vkEnumeratePhysicalDevices");
  std::vector<PhysicalDevice> devices;
  for (uint32_t i = 0; i < count; ++i) devices.push_back(query(instance, handles[i], i, instance_version));
  return devices;
}

std::vector<DeviceInfo> device_infos(std::vector<PhysicalDevice> devices) {
  std::vector<DeviceInfo> out;
  out.reserve(devices.size());
  for (auto& d : devices) out.push_back(std::move(d.info));
  return out;
}

}  // namespace vkgemm
