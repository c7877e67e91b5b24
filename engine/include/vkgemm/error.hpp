// How vkgemm fails: every error is a vkgemm::Error carrying a code, the VkResult when Vulkan said no,
// and a sentence that names the argument, the limit and the device.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace vkgemm {

enum class ErrorCode {
  invalid_argument,      // a value outside what the call accepts (a zero repeat count, a bad tile size, ...)
  dimension_mismatch,    // the shapes of A, B and C do not form a product
  unsupported_type,      // the device lacks what the element type needs (shaderFloat64, ...)
  unsupported_config,    // a kernel configuration that does not fit the device's limits
  too_large,             // a matrix larger than maxStorageBufferRange, an allocation or device memory
  out_of_memory,         // Vulkan could not allocate host or device memory
  no_loader,             // no Vulkan loader (libvulkan.so.1) could be loaded
  no_device,             // no Vulkan device with a compute queue
  device_not_found,      // the device selector matched nothing
  validation_unavailable,// validation was asked for but VK_LAYER_KHRONOS_validation is not installed
  device_lost,           // VK_ERROR_DEVICE_LOST
  vulkan_error,          // any other failing VkResult
  file_format,           // a malformed or unsupported input file
  io_error,              // a file could not be read or written
  // The reference BLAS's own argument checks (xGEMM), one code each:
  negative_dimension,    // m, n, k or the batch count below zero
  invalid_leading_dimension,  // lda, ldb or ldc smaller than the rows (or columns) it must hold
  invalid_stride,        // a negative batch stride, or C's stride letting batch entries overlap
  buffer_too_small,      // a buffer (and offset) too small for the matrices the call describes
  not_ready,             // a recorded GEMM's results were asked for before its submission completed
  unsupported_feature,   // the device (as created) lacks an optional extension the call needs
};

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
