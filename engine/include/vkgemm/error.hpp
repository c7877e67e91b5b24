// How vkgemm fails: every error is a vkgemm::Error carrying a code, the VkResult when Vulkan said no,
// and a sentence that names the argument, the limit and the device.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "vkgemm/names.hpp"

namespace vkgemm {

// Each code and what it means: vkgemm/names.hpp.
enum class ErrorCode { VKGEMM_ERROR_CODES(VKGEMM_NAMES_ENUMERATOR) };

const char* to_string(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message, int32_t vk_result = 0)
      : std::runtime_error(message), code_(code), vk_result_(vk_result) {}

  ErrorCode code() const noexcept { return code_; }
  // The VkResult behind the error, 0 (VK_SUCCESS) when Vulkan was not involved.
  int32_t vk_result() const noexcept { return vk_result_; }

 private:
  ErrorCode code_;
  int32_t vk_result_;
};

}  // namespace vkgemm
