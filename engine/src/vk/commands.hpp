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

// vkCmdFillBuffer of `word` over buffer[offset, offset + bytes) between barriers: every earlier transfer or
// compute access to memory done before it, every later one (transfer, compute, host) after it.
void record_fill(const VolkDeviceTable& t, VkCommandBuffer cmd, VkBuffer buffer, uint64_t offset, uint64_t bytes,
                 uint32_t word);

// A pool of `count` timestamp queries on `device`.
DeviceHandle<VkQueryPool> timestamp_queries(const Device& device, uint32_t count);

}  // namespace vkgemm::vk
