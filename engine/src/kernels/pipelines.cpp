#include "kernels/pipelines.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "kernels/experiments.hpp"
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

Pipelines::Key Pipelines::key_of(const LaunchShape& shape) {
  std::vector<uint32_t> values;
  for (const auto& c : shape.constants) values.push_back(c.value);
  return {shape.shader, std::move(values)};
}

VkShaderModule Pipelines::module(const std::string& shader) {
  auto& module = modules_[shader];
  if (!module) {
    const auto code = spirv(shader);
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = code.size_bytes();
    info.pCode = code.data();
    VkShaderModule handle = VK_NULL_HANDLE;
    vk::check(device_.table().vkCreateShaderModule(device_.get(), &info, nullptr, &handle), "vkCreateShaderModule");
    module = vk::DeviceHandle<VkShaderModule>(device_.table(), device_.get(), handle);
  }
  return module.get();
}

// Reads only what the constructor set, so that prepare's threads may call it side by side (the pipeline
// cache is internally synchronized: it is not created externally synchronized).
vk::DeviceHandle<VkPipeline> Pipelines::create(const LaunchShape& shape, VkShaderModule module) const {
  const auto& t = device_.table();
  const VkDevice dev = device_.get();
  const Key key = key_of(shape);
  std::vector<VkSpecializationMapEntry> entries;
  for (size_t i = 0; i < shape.constants.size(); ++i) {
    const uint32_t id = specialization_id(shape.shader, shape.constants[i].name);
    entries.push_back({id, static_cast<uint32_t>(i * sizeof(uint32_t)), sizeof(uint32_t)});
  }
  VkSpecializationInfo spec{};
  spec.mapEntryCount = static_cast<uint32_t>(entries.size());
  spec.pMapEntries = entries.data();
  spec.dataSize = key.second.size() * sizeof(uint32_t);
  spec.pData = key.second.data();

  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  if (capture_statistics_) info.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  if (capture_statistics_ && ir_experiment_folder()) info.flags |= VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
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
  vk::DeviceHandle<VkPipeline> owned(t, dev, pipeline);
  ++created_;
  std::string name = fmt::format("vkgemm {}", shape.shader);
  for (auto v : key.second) name += fmt::format(" {}", v);
  instance_.set_name(dev, VK_OBJECT_TYPE_PIPELINE, reinterpret_cast<uint64_t>(pipeline), name.c_str());
  return owned;
}

VkPipeline Pipelines::get(const LaunchShape& shape) {
  Key key = key_of(shape);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();
  auto pipeline = create(shape, module(shape.shader));
  return pipelines_.emplace(std::move(key), std::move(pipeline)).first->second.get();
}

size_t Pipelines::prepare(const std::vector<LaunchShape>& shapes, unsigned threads) {
  std::vector<const LaunchShape*> missing;
  std::set<Key> seen;
  for (const LaunchShape& s : shapes) {
    Key key = key_of(s);
    if (pipelines_.count(key) || !seen.insert(std::move(key)).second) continue;
    module(s.shader);  // modules first, on this thread: create() only reads them
    missing.push_back(&s);
  }
  std::vector<vk::DeviceHandle<VkPipeline>> built(missing.size());
  std::atomic<size_t> next{0};
  std::mutex first_error_lock;
  std::exception_ptr first_error;
  const auto work = [&] {
    for (size_t i = next++; i < missing.size(); i = next++) {
      try {
        built[i] = create(*missing[i], modules_.at(missing[i]->shader).get());
      } catch (...) {
        const std::lock_guard guard(first_error_lock);
        if (!first_error) first_error = std::current_exception();
      }
    }
  };
  const size_t wanted = threads ? threads : std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < std::min(wanted, missing.size()); ++i) helpers.emplace_back(work);
  work();
  for (auto& h : helpers) h.join();
  size_t count = 0;
  for (size_t i = 0; i < missing.size(); ++i) {
    if (built[i]) pipelines_.emplace(key_of(*missing[i]), std::move(built[i])), ++count;
  }
  if (first_error) std::rethrow_exception(first_error);
  return count;
}

}  // namespace vkgemm::kernels
