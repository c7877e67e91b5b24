// Pipelines: the one descriptor-set layout and pipeline layout every GEMM kernel shares, a VkPipelineCache,
// and each compute pipeline built once per (shader variant, specialization) and kept.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <volk.h>

#include "kernels/registry.hpp"
#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vk/instance.hpp"

namespace vkgemm::kernels {

class Pipelines {
 public:
  Pipelines(const vk::Instance& instance, const vk::Device& device);

  VkDescriptorSetLayout set_layout() const noexcept { return set_layout_.get(); }
  VkPipelineLayout layout() const noexcept { return layout_.get(); }
  VkPipeline get(const LaunchShape& shape);

 private:
  using Key = std::pair<std::string, std::vector<uint32_t>>;
  const vk::Instance& instance_;
  const vk::Device& device_;
  vk::DeviceHandle<VkDescriptorSetLayout> set_layout_;
  vk::DeviceHandle<VkPipelineLayout> layout_;
  vk::DeviceHandle<VkPipelineCache> cache_;
  std::map<std::string, vk::DeviceHandle<VkShaderModule>> modules_;
  std::map<Key, vk::DeviceHandle<VkPipeline>> pipelines_;
};

}  // namespace vkgemm::kernels
