// Instance: the owned VkInstance, its debug messenger when validation is on, and the instance-level
// extension functions loaded for this instance alone (so several engines never share pointers).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>

#include <volk.h>

namespace vkgemm::vk {

// Loads libvulkan.so.1 through volk once per process (or takes the application's vkGetInstanceProcAddr,
// when an adopted device comes first); throws vkgemm::Error(no_loader) when it is missing.
void ensure_loader(PFN_vkGetInstanceProcAddr application_loader = nullptr);

// The loader keeps one process-wide list of instances and devices. Debian 12's loader (1.3.239) walks it
// without a lock when it names an object (terminator_SetDebugUtilsObjectNameEXT → loader_get_icd_and_device),
// so one engine naming a buffer while another creates or destroys its device crashed in the loader (the
// threads suite, under AddressSanitizer, in CI; later loaders take a lock of their own there). vkgemm holds this
// mutex around everything of its own that walks or changes that list: creating and destroying instances and
// devices, and naming objects. An application creating devices on other threads is outside its reach.
std::mutex& loader_list_mutex();

struct ValidationSink {
  std::function<void(std::string_view)> callback;
  std::atomic<uint64_t> count{0};
};

class Instance {
 public:
  // validation: enable VK_LAYER_KHRONOS_validation and route its messages to `sink` (must be non-null).
  Instance(bool validation, ValidationSink* sink);
  // The application's instance, borrowed: never destroyed, no messenger, no object names.
  Instance(VkInstance borrowed, PFN_vkGetInstanceProcAddr loader);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance get() const noexcept { return instance_; }
  uint32_t api_version() const noexcept { return api_version_; }
  // Whether this instance lists portability drivers (VK_KHR_portability_enumeration, where the loader offers
  // it); always false for a borrowed instance (the application chose its extensions).
  bool portability_enumeration() const noexcept { return portability_enumeration_; }
  // Names an object for validation messages and captures; a no-op without VK_EXT_debug_utils.
  void set_name(VkDevice device, VkObjectType type, uint64_t handle, const char* name) const;

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t api_version_ = 0;
  bool owned_ = true;
  bool portability_enumeration_ = false;
  PFN_vkCreateDebugUtilsMessengerEXT create_messenger_ = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger_ = nullptr;
  PFN_vkSetDebugUtilsObjectNameEXT set_object_name_ = nullptr;
};

}  // namespace vkgemm::vk
