// What a device offers for cooperative matrices (VK_KHR_cooperative_matrix, VK_NV_cooperative_matrix2):
// the features vkgemm's kernels need and the shapes, types and scopes the device lists.
#pragma once

#include <string>
#include <vector>

#include <volk.h>

#include "vkgemm/device_info.hpp"

namespace vkgemm {

// Fills info's coopmat_* fields. `extensions` are the device's extension names. Built against headers
// older than the extensions (1.3.239 has neither), it reports none; the entry points are loaded here through
// vkGetInstanceProcAddr, so a volk older than the headers does not matter.
void query_cooperative_matrices(VkInstance instance, VkPhysicalDevice pd, const std::vector<std::string>& extensions,
                                DeviceInfo& info);

}  // namespace vkgemm
