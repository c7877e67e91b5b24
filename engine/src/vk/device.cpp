#include "vk/device.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "vk/check.hpp"
#include "vk/instance.hpp"

namespace vkgemm::vk {

namespace {

// What the engine's own device is created with: exactly what the kernels may use and the device has
// (device_query.cpp, coopmat_query.cpp found it), as a feature chain from `features` and the extensions.
// Built in place: the chain points into the object itself.
class EnabledFeatures {
 public:
  explicit EnabledFeatures(const DeviceInfo& d) {
    features.features.shaderFloat64 = on(d.float64);
    core(d);
#if defined(VK_KHR_cooperative_matrix)
    if (d.coopmat_khr) {
      coop.cooperativeMatrix = VK_TRUE;
      append(coop, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
#endif
#if defined(VK_NV_cooperative_matrix2)
    if (d.coopmat2) {
      coop2.cooperativeMatrixWorkgroupScope = VK_TRUE;
      coop2.cooperativeMatrixFlexibleDimensions = VK_TRUE;
      coop2.cooperativeMatrixTensorAddressing = VK_TRUE;
      coop2.cooperativeMatrixConversions = VK_TRUE;
      coop2.cooperativeMatrixPerElementOperations = VK_TRUE;
      append(coop2, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
    }
#endif
#if defined(VK_KHR_shader_bfloat16)
    // bfloat16_t and bf16 cooperative matrices (the matrix kernels' bf16 variants).
    if (d.bfloat16) {
      bf16.shaderBFloat16Type = VK_TRUE;
      bf16.shaderBFloat16CooperativeMatrix = on(d.bfloat16_coopmat);
      append(bf16, VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
    }
#endif
    // VK_KHR_pipeline_executable_properties where the device has it: the driver's statistics of each pipeline.
    if (d.pipeline_statistics) {
      executable_info.pipelineExecutableInfo = VK_TRUE;
      append(executable_info, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    }
    // VK_KHR_push_descriptor where the device has it (and enough of them): plans record with no descriptor set.
    if (d.push_descriptor) extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    // VK_EXT_external_memory_host where the device imports host allocations: host-memory calls copy from
    // and to the caller's own pages.
    if (d.host_import) extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  }
  EnabledFeatures(const EnabledFeatures&) = delete;
  EnabledFeatures& operator=(const EnabledFeatures&) = delete;

  // Timeline semaphores (the submissions' serials) are required of every 1.2 device; 1.3 stands for it here.
  bool timeline = false;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  std::vector<const char*> extensions;

 private:
  static VkBool32 on(bool b) { return b ? VK_TRUE : VK_FALSE; }
  template <typename Struct>
  void append(Struct& s, const char* extension = nullptr) {
    *tail_ = &s;
    tail_ = &s.pNext;
    if (extension) extensions.push_back(extension);
  }
  // Vulkan 1.1 to 1.3's features, only where 1.2 or 1.3 is spoken.
  void core(const DeviceInfo& d) {
    timeline = d.vulkan13;
    if (d.float16 || d.storage16 || d.storage8 || d.vulkan_memory_model || timeline || d.host_query_reset ||
        d.int8) {
      f12.timelineSemaphore = on(timeline);
      f12.hostQueryReset = on(d.host_query_reset);
      f11.storageBuffer16BitAccess = on(d.storage16);
      f12.shaderFloat16 = on(d.float16);
      f12.storageBuffer8BitAccess = on(d.storage8);
      f12.vulkanMemoryModel = on(d.vulkan_memory_model);
      f12.vulkanMemoryModelDeviceScope = on(d.vulkan_memory_model && d.vulkan_memory_model_device_scope);
      f12.shaderInt8 = on(d.int8);
      append(f11);
      append(f12);
    }
    if (d.vulkan13) {
      f13.subgroupSizeControl = on(d.subgroup_size_control);
      f13.computeFullSubgroups = on(d.subgroup_size_control);
      // Required of every 1.3 device; SPIR-V 1.6 (the cooperative-matrix shaders) sizes workgroups from
      // specialization constants with LocalSizeId, which needs it on.
      f13.maintenance4 = VK_TRUE;
      f13.shaderIntegerDotProduct = on(d.integer_dot);
      append(f13);
    }
  }

  void** tail_ = &features.pNext;  // each enabled struct is appended here
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
#if defined(VK_KHR_cooperative_matrix)
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
#endif
#if defined(VK_NV_cooperative_matrix2)
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV coop2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
#endif
#if defined(VK_KHR_shader_bfloat16)
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bf16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
#endif
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_info{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
};

// A portability driver (MoltenVK: Vulkan on top of another API, some features missing) lists
// VK_KHR_portability_subset, and a device created on it must enable it. Provisional (vulkan_beta.h), so
// named by its string. Only for the devices vkgemm creates: an adopted device is the application's.
constexpr const char* kPortabilitySubset = "VK_KHR_portability_subset";

bool lists_portability_subset(VkPhysicalDevice physical) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(),
                     [](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, kPortabilitySubset) == 0; });
}

}  // namespace

Device::Device(const PhysicalDevice& physical) : physical_(physical.handle), family_(physical.compute_family) {
  const float priorities[2] = {1.0f, 1.0f};
  // The compute queue, and up to two queues of a transfer-only family (the copies beside the products).
  VkDeviceQueueCreateInfo queue_infos[2] = {{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO},
                                            {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO}};
  queue_infos[0].queueFamilyIndex = family_;
  queue_infos[0].queueCount = 1;
  queue_infos[0].pQueuePriorities = priorities;
  const uint32_t copies = std::min<uint32_t>(physical.info.copy_queues, 2);
  queue_infos[1].queueFamilyIndex = physical.copy_family;
  queue_infos[1].queueCount = copies;
  queue_infos[1].pQueuePriorities = priorities;
  const EnabledFeatures enabled(physical.info);
  timeline_ = enabled.timeline;
  std::vector<const char*> extensions = enabled.extensions;
  if (lists_portability_subset(physical_)) extensions.push_back(kPortabilitySubset);
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &enabled.features;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  info.queueCreateInfoCount = copies ? 2 : 1;
  info.pQueueCreateInfos = queue_infos;
  {
    std::lock_guard lock(loader_list_mutex());
    check(vkCreateDevice(physical_, &info, nullptr, &device_), "vkCreateDevice");
    volkLoadDeviceTable(&table_, device_);
  }
  table_.vkGetDeviceQueue(device_, family_, 0, &queue_);
  families_[0] = copy_family_ = family_;
  copy_queues_[0] = copy_queues_[1] = queue_;
  if (copies) {
    copy_family_ = families_[1] = physical.copy_family;
    family_count_ = 2;
    table_.vkGetDeviceQueue(device_, copy_family_, 0, &copy_queues_[0]);
    table_.vkGetDeviceQueue(device_, copy_family_, copies - 1, &copy_queues_[1]);
  }
}

Device::Device(VkPhysicalDevice physical, VkDevice borrowed, VkQueue queue, uint32_t family, bool timeline)
    : physical_(physical), device_(borrowed), queue_(queue), family_(family), owned_(false), timeline_(timeline) {
  volkLoadDeviceTable(&table_, device_);
  // The application's queue is the only one the engine has: its copies go there too.
  families_[0] = copy_family_ = family_;
  copy_queues_[0] = copy_queues_[1] = queue_;
}

void Device::lose(const char* what) const noexcept {
  const char* none = nullptr;
  lost_at_.compare_exchange_strong(none, what, std::memory_order_acq_rel);
}

void Device::check(VkResult result, const char* what) const {
  if (result == VK_ERROR_DEVICE_LOST) lose(what);
  vk::check(result, what);
}

void Device::check_alive(const char* what) const {
  const char* at = lost_at_.load(std::memory_order_acquire);
  if (!at) return;
  throw Error(ErrorCode::device_lost,
              fmt::format("{}: the device was lost ({} failed earlier: VK_ERROR_DEVICE_LOST); nothing more runs on "
                          "it: create a new Engine", what, at),
              VK_ERROR_DEVICE_LOST);
}

Device::~Device() {
  if (owned_ && device_ != VK_NULL_HANDLE) {
    table_.vkDeviceWaitIdle(device_);
    std::lock_guard lock(loader_list_mutex());
    table_.vkDestroyDevice(device_, nullptr);
  }
}

}  // namespace vkgemm::vk
