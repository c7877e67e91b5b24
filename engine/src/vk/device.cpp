#include "vk/device.hpp"

#include <vector>

#include "vk/check.hpp"

namespace vkgemm::vk {
namespace {

// VK_KHR_pipeline_executable_properties, when the device has it (DeviceInfo::pipeline_statistics): its
// extension name and its feature struct, put at the front of the features chain.
void enable_pipeline_statistics(const DeviceInfo& info, std::vector<const char*>& extensions,
                                VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR& feature,
                                VkPhysicalDeviceFeatures2& features) {
  if (!info.pipeline_statistics) return;
  extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  feature.pipelineExecutableInfo = VK_TRUE;
  feature.pNext = features.pNext;
  features.pNext = &feature;
}

}  // namespace

Device::Device(const PhysicalDevice& physical) : physical_(physical.handle), family_(physical.compute_family) {
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  // Enable exactly what the kernels may use and the device has.
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.features.shaderFloat64 = physical.info.float64 ? VK_TRUE : VK_FALSE;
  std::vector<const char*> extensions;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_info{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  enable_pipeline_statistics(physical.info, extensions, executable_info, features);

  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  check(vkCreateDevice(physical_, &info, nullptr, &device_), "vkCreateDevice");
  volkLoadDeviceTable(&table_, device_);
  table_.vkGetDeviceQueue(device_, family_, 0, &queue_);
}

Device::Device(VkPhysicalDevice physical, VkDevice borrowed, VkQueue queue, uint32_t family)
    : physical_(physical), device_(borrowed), queue_(queue), family_(family), owned_(false) {
  volkLoadDeviceTable(&table_, device_);
}

Device::~Device() {
  if (owned_ && device_ != VK_NULL_HANDLE) {
    table_.vkDeviceWaitIdle(device_);
    table_.vkDestroyDevice(device_, nullptr);
  }
}

}  // namespace vkgemm::vk
