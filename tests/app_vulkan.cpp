#include "app_vulkan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "support.hpp"

namespace vkgemm::test {
namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  const std::string text = std::string("application instance validation: ") + data->pMessage;
  if (expected_message(text)) return VK_FALSE;
  ADD_FAIL_CHECK_AT(__FILE__, __LINE__, text);
  return VK_FALSE;
}

void ok(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(r));
}

}  // namespace

AppVulkan::AppVulkan(bool shader_float64, bool f16, const VkAllocationCallbacks* device_allocator, bool validation,
                     bool host_import)
    : device_allocator_(device_allocator) {
  ok(volkInitialize(), "volkInitialize");
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  api_version = f16 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;
  app.apiVersion = api_version;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  mi.pfnUserCallback = on_message;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT, &mi};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, &features};
  ici.pApplicationInfo = &app;
  if (validation) {
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = &layer;
    ici.enabledExtensionCount = 2;
    ici.ppEnabledExtensionNames = extensions;
  } else {
    ici.pNext = nullptr;
  }
  ok(vkCreateInstance(&ici, nullptr, &instance), "vkCreateInstance");
  volkLoadInstance(instance);
  if (validation) {
    ok(vkCreateDebugUtilsMessengerEXT(instance, &mi, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
  }

  uint32_t count = 1;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> pds(count);
  vkEnumeratePhysicalDevices(instance, &count, pds.data());
  for (VkPhysicalDevice pd : pds) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
    std::vector<VkQueueFamilyProperties> fams(n);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
    for (uint32_t i = 0; i < n && !physical; ++i)
      if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) physical = pd, family = i;
    if (physical) break;
  }
  if (!physical) throw std::runtime_error("no device with a compute queue");
  VkPhysicalDeviceFeatures available;
  vkGetPhysicalDeviceFeatures(physical, &available);
  enabled.shaderFloat64 = shader_float64 ? available.shaderFloat64 : VK_FALSE;
  if (f16) {  // what the device has of the two, enabled
    VkPhysicalDeviceVulkan12Features has12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features has11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &has12};
    VkPhysicalDeviceFeatures2 has{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &has11, {}};
    vkGetPhysicalDeviceFeatures2(physical, &has);
    enabled11.storageBuffer16BitAccess = has11.storageBuffer16BitAccess;
    enabled12.shaderFloat16 = has12.shaderFloat16;
    enabled12.timelineSemaphore = has12.timelineSemaphore;
    enabled12.hostQueryReset = has12.hostQueryReset;
    enabled11.pNext = &enabled12;
  }
  enable_push_descriptor();
  if (host_import && offers(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
    device_extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  }
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.pEnabledFeatures = &enabled;
  if (f16) dci.pNext = &enabled11;
  dci.enabledExtensionCount = static_cast<uint32_t>(device_extensions.size());
  dci.ppEnabledExtensionNames = device_extensions.data();
  ok(vkCreateDevice(physical, &dci, device_allocator_, &device), "vkCreateDevice");
  volkLoadDevice(device);
  vkGetDeviceQueue(device, family, 0, &queue);
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = family;
  ok(vkCreateCommandPool(device, &cpi, nullptr, &pool_), "vkCreateCommandPool");
}

AppVulkan::~AppVulkan() {
  vkDeviceWaitIdle(device);
  for (auto& b : buffers_) {
    vkDestroyBuffer(device, b.buffer, nullptr);
    vkFreeMemory(device, b.memory, nullptr);
  }
  vkDestroyCommandPool(device, pool_, nullptr);
  vkDestroyDevice(device, device_allocator_);
  if (messenger_) vkDestroyDebugUtilsMessengerEXT(instance, messenger_, nullptr);
  vkDestroyInstance(instance, nullptr);
}

bool AppVulkan::offers(const char* extension) const {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> offered(n);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, offered.data());
  return std::any_of(offered.begin(), offered.end(),
                     [&](const VkExtensionProperties& e) { return std::string_view(e.extensionName) == extension; });
}

void AppVulkan::enable_push_descriptor() {
  if (!offers(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) return;
  device_extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  VkPhysicalDevicePushDescriptorPropertiesKHR push{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &push, {}};
  vkGetPhysicalDeviceProperties2(physical, &props);
  max_push_descriptors = push.maxPushDescriptors;
}

VulkanDevice AppVulkan::adopt_info() const {
  VulkanDevice d{instance, physical, device, queue, family, api_version, vkGetInstanceProcAddr, &enabled};
  if (api_version >= VK_API_VERSION_1_2) d.enabled_feature_chain = &enabled11;
  d.enabled_extensions = device_extensions;
  return d;
}

AppBuffer AppVulkan::buffer(VkDeviceSize size, VkBufferUsageFlags usage) {
  AppBuffer b;
  b.size = size;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = usage;
  ok(vkCreateBuffer(device, &info, nullptr, &b.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(physical, &props);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = 0;
  while (type < props.memoryTypeCount &&
         !((req.memoryTypeBits & (1u << type)) && (props.memoryTypes[type].propertyFlags & want) == want))
    ++type;
  if (type == props.memoryTypeCount) throw std::runtime_error("no host-visible memory");
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  ok(vkAllocateMemory(device, &alloc, nullptr, &b.memory), "vkAllocateMemory");
  ok(vkBindBufferMemory(device, b.buffer, b.memory, 0), "vkBindBufferMemory");
  ok(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  buffers_.push_back(b);
  return b;
}

VkCommandBuffer AppVulkan::begin() {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  ok(vkAllocateCommandBuffers(device, &cai, &cmd), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  ok(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
  return cmd;
}

void AppVulkan::submit_and_wait(VkCommandBuffer cmd, VkFence fence) {
  // The host reads the results next.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  ok(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  ok(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
  ok(vkQueueWaitIdle(queue), "vkQueueWaitIdle");
}

void AppVulkan::compute_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
}

}  // namespace vkgemm::test
