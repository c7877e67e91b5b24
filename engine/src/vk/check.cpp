#include "vk/check.hpp"

#include <fmt/format.h>

namespace vkgemm::vk {

const char* result_name(VkResult result) noexcept {
  switch (result) {
#define VKGEMM_RESULT(name) \
  case name:                \
    return #name;
    VKGEMM_RESULT(VK_SUCCESS)
    VKGEMM_RESULT(VK_NOT_READY)
    VKGEMM_RESULT(VK_TIMEOUT)
    VKGEMM_RESULT(VK_INCOMPLETE)
    VKGEMM_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    VKGEMM_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    VKGEMM_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    VKGEMM_RESULT(VK_ERROR_DEVICE_LOST)
    VKGEMM_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    VKGEMM_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    VKGEMM_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    VKGEMM_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    VKGEMM_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    VKGEMM_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    VKGEMM_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    VKGEMM_RESULT(VK_ERROR_FRAGMENTED_POOL)
    VKGEMM_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    VKGEMM_RESULT(VK_ERROR_INVALID_SHADER_NV)
    VKGEMM_RESULT(VK_ERROR_UNKNOWN)
#undef VKGEMM_RESULT
    default:
      return "VkResult(unknown)";
  }
}

void check(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return;
  const auto message = fmt::format("{} failed: {}", what, result_name(result));
  switch (result) {
    case VK_ERROR_DEVICE_LOST:
      throw Error(ErrorCode::device_lost, message + " (the device was lost; create a new Engine)", result);
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      throw Error(ErrorCode::out_of_memory, message, result);
    default:
      throw Error(ErrorCode::vulkan_error, message, result);
  }
}

}  // namespace vkgemm::vk
