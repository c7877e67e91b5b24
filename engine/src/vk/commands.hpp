// Small recordings every floor above shares: a global memory barrier and a pool of timestamp queries.
#pragma once

#include <cstdint>

#include <volk.h>

#include "vk/device.hpp"
#include "vk/handle.hpp"

namespace vkgemm::vk {

// One global memory barrier from `src` stages/accesses to `dst` ones.
void memory_barrier(const VolkDeviceTable& t, VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                    VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

// A pool of `count` timestamp queries on `device`.
DeviceHandle<VkQueryPool> timestamp_queries(const Device& device, uint32_t count);

}  // namespace vkgemm::vk
