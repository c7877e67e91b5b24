#include "kernels/pipelines.hpp"

#include <fmt/format.h>

#include "kernels/push_constants.hpp"
#include "vk/check.hpp"

namespace vkgemm::kernels {

Pipelines::Pipelines(const vk::Instance& instance, const vk::Device& device, bool capture_statistics,
                     bool push_descriptors)
    : instance_(instance), device_(device), capture_statistics_(capture_statistics), push_descriptors_(push_descriptors) {
  const auto& t = device.table();
  const VkDevice dev = device.get();

  VkDescriptorSetLayoutBinding bindings[kGemmBindings]{};
  for (uint32_t i = 0; i < kGemmBindings; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  if (push_descriptors) set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  set_info.bindingCount = kGemmBindings;
  set_info.pBindings = bindings;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  vk::check(t.vkCreateDescriptorSetLayout(dev, &set_info, nullptr, &set_layout), "vkCreateDescriptorSetLayout");
  set_layout_ = vk::DeviceHandle<VkDescriptorSetLayout>(t, dev, set_layout);

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(GemmPushConstants)};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout;
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &range;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  vk::check(t.vkCreatePipelineLayout(dev, &layout_info, nullptr, &layout), "vkCreatePipelineLayout");
  layout_ = vk::DeviceHandle<VkPipelineLayout>(t, dev, layout);

  VkPipelineCacheCreateInfo cache_info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VkPipelineCache cache = VK_NULL_HANDLE;
  vk::check(t.vkCreatePipelineCache(dev, &cache_info, nullptr, &cache), "vkCreatePipelineCache");
  cache_ = vk::DeviceHandle<VkPipelineCache>(t, dev, cache);
}

void Pipelines::bind(VkCommandBuffer cmd, VkDescriptorSet set, const VkWriteDescriptorSet* writes) const {
  const auto& t = device_.table();
  if (push_descriptors_) {
    t.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout_.get(), 0, kGemmBindings, writes);
  } else {
    t.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout_.get(), 0, 1, &set, 0, nullptr);
  }
}

VkPipeline Pipelines::get(const LaunchShape& shape) {
  std::vector<uint32_t> values;
  for (const auto& c : shape.constants) values.push_back(c.value);
  Key key{shape.shader, values};
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();

  const auto& t = device_.table();
  const VkDevice dev = device_.get();
  auto& module = modules_[shape.shader];
  if (!module) {
    const auto code = spirv(shape.shader);
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = code.size_bytes();
    info.pCode = code.data();
    VkShaderModule handle = VK_NULL_HANDLE;
    vk::check(t.vkCreateShaderModule(dev, &info, nullptr, &handle), "vkCreateShaderModule");
    module = vk::DeviceHandle<VkShaderModule>(t, dev, handle);
  }

  std::vector<VkSpecializationMapEntry> entries;
  for (size_t i = 0; i < shape.constants.size(); ++i) {
    entries.push_back({shape.constants[i].id, static_cast<uint32_t>(i * sizeof(uint32_t)), sizeof(uint32_t)});
  }
  VkSpecializationInfo spec{};
  spec.mapEntryCount = static_cast<uint32_t>(entries.size());
  spec.pMapEntries = entries.data();
  spec.dataSize = values.size() * sizeof(uint32_t);
  spec.pData = values.data();

  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  if (capture_statistics_) info.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module.get();
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = &spec;
  // The coopmat kernel's layout of subgroups over the tile assumes subgroups of exactly this size, all full.
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  if (shape.required_subgroup_size) {
    subgroup.requiredSubgroupSize = shape.required_subgroup_size;
    info.stage.pNext = &subgroup;
    info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  info.layout = layout_.get();
  VkPipeline pipeline = VK_NULL_HANDLE;
  vk::check(t.vkCreateComputePipelines(dev, cache_.get(), 1, &info, nullptr, &pipeline), "vkCreateComputePipelines");

  std::string name = fmt::format("vkgemm {}", shape.shader);
  for (auto v : values) name += fmt::format(" {}", v);
  instance_.set_name(dev, VK_OBJECT_TYPE_PIPELINE, reinterpret_cast<uint64_t>(pipeline), name.c_str());
  return pipelines_.emplace(std::move(key), vk::DeviceHandle<VkPipeline>(t, dev, pipeline)).first->second.get();
}

}  // namespace vkgemm::kernels
