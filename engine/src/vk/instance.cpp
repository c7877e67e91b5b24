#include "vk/instance.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "vk/check.hpp"

namespace vkgemm::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::mutex& loader_mutex() {
  static std::mutex m;
  return m;
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& l) { return std::strcmp(l.layerName, name) == 0; });
}

bool has_extension(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateInstanceExtensionProperties(nullptr, &count, exts.data());
  return std::any_of(exts.begin(), exts.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

// Portability drivers (MoltenVK on macOS, other layered implementations) are listed only to an instance
// created with VK_KHR_portability_enumeration and its flag: asked for wherever the loader offers it, so that
// such devices appear. Returns whether it was added to `extensions`.
bool enable_portability_enumeration(std::vector<const char*>& extensions) {
#if defined(VK_KHR_portability_enumeration)
  if (!has_extension(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) return false;
  extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
  return true;
#else
  (void)extensions;
  return false;
#endif
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT,
                                                const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* sink = static_cast<ValidationSink*>(user);
  sink->count.fetch_add(1, std::memory_order_relaxed);
  const char* level = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning";
  const auto text = fmt::format("vulkan validation {}: {}", level, data->pMessage ? data->pMessage : "");
  if (sink->callback) {
    sink->callback(text);
  } else {
    fmt::print(stderr, "{}\n", text);
  }
  return VK_FALSE;
}

}  // namespace

std::mutex& loader_list_mutex() {
  static std::mutex m;
  return m;
}

void ensure_loader(PFN_vkGetInstanceProcAddr application_loader) {
  std::lock_guard lock(loader_mutex());
  static bool loaded = false;
  if (loaded) return;
  if (application_loader) {
    volkInitializeCustom(application_loader);
    loaded = true;
    return;
  }
  if (volkInitialize() != VK_SUCCESS) {
    throw Error(ErrorCode::no_loader,
                "no Vulkan loader found (libvulkan.so.1). Install one: apt-get install libvulkan1 "
                "mesa-vulkan-drivers (Mesa's lavapipe runs Vulkan on the CPU when there is no GPU)");
  }
  loaded = true;
}

Instance::Instance(bool validation, ValidationSink* sink) {
  ensure_loader();
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_1) {
    throw Error(ErrorCode::no_loader, fmt::format("the Vulkan loader supports API {}.{}; vkgemm needs 1.1 or later",
                                                  VK_API_VERSION_MAJOR(loader_version),
                                                  VK_API_VERSION_MINOR(loader_version)));
  }
  api_version_ = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  const bool debug_utils = has_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  portability_enumeration_ = enable_portability_enumeration(extensions);
  if (validation) {
    if (!has_layer(kValidationLayer)) {
      throw Error(ErrorCode::validation_unavailable,
                  "validation was requested but VK_LAYER_KHRONOS_validation is not installed "
                  "(apt-get install vulkan-validationlayers)");
    }
    if (!debug_utils) {
      throw Error(ErrorCode::validation_unavailable,
                  "validation was requested but the loader lacks VK_EXT_debug_utils to report messages");
    }
    layers.push_back(kValidationLayer);
  }
  if (debug_utils) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkgemm";
  app.pEngineName = "vkgemm";
  app.apiVersion = api_version_;

  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = on_debug_message;
  messenger_info.pUserData = sink;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
#if defined(VK_KHR_portability_enumeration)
  if (portability_enumeration_) info.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
#endif
  if (validation) info.pNext = &messenger_info;  // also reports on instance creation and destruction
  {
    std::lock_guard lock(loader_list_mutex());
    check(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
  }

  {
    // Core instance functions from the loader dispatch on the handle, so loading them globally is safe
    // for several instances; extension functions are kept per instance below.
    std::lock_guard lock(loader_mutex());
    volkLoadInstanceOnly(instance_);
  }
  if (debug_utils) {
    create_messenger_ = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    destroy_messenger_ = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    set_object_name_ = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(
        vkGetInstanceProcAddr(instance_, "vkSetDebugUtilsObjectNameEXT"));
  }
  if (validation) {
    const VkResult r = create_messenger_(instance_, &messenger_info, nullptr, &messenger_);
    if (r != VK_SUCCESS) {
      vkDestroyInstance(instance_, nullptr);
      check(r, "vkCreateDebugUtilsMessengerEXT");
    }
  }
}

Instance::Instance(VkInstance borrowed, PFN_vkGetInstanceProcAddr loader) : instance_(borrowed), owned_(false) {
  ensure_loader(loader);
  std::lock_guard lock(loader_mutex());
  volkLoadInstanceOnly(instance_);  // loader trampolines: the same for every instance of this loader
}

Instance::~Instance() {
  if (!owned_) return;
  std::lock_guard lock(loader_list_mutex());
  if (messenger_ != VK_NULL_HANDLE) destroy_messenger_(instance_, messenger_, nullptr);
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

void Instance::set_name(VkDevice device, VkObjectType type, uint64_t handle, const char* name) const {
  if (!set_object_name_ || !name || !*name) return;
  VkDebugUtilsObjectNameInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
  info.objectType = type;
  info.objectHandle = handle;
  info.pObjectName = name;
  std::lock_guard lock(loader_list_mutex());
  set_object_name_(device, &info);
}

}  // namespace vkgemm::vk
