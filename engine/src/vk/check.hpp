// Turns a failing VkResult into a vkgemm::Error that says what was being done.
#pragma once

#include <string>

#include <volk.h>

#include "vkgemm/error.hpp"

namespace vkgemm::vk {

const char* result_name(VkResult result) noexcept;

// Throws vkgemm::Error (device_lost, out_of_memory or vulkan_error) when result is not VK_SUCCESS.
void check(VkResult result, const char* what);

}  // namespace vkgemm::vk
