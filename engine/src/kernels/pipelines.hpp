// Pipelines: the one descriptor-set layout and pipeline layout every GEMM kernel shares, a VkPipelineCache,
// and each compute pipeline built once per (shader variant, specialization) and kept. With
// `capture_statistics` (the device has VK_KHR_pipeline_executable_properties on) every pipeline is built with
// VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR, so that statistics() can read what the driver made of it.
// With `push_descriptors` (DeviceInfo::push_descriptor: VK_KHR_push_descriptor is on) the set layout is a
// push-descriptor layout: every recording pushes its bindings (bind) and no descriptor set can be made of it.
// Without, recordings bind descriptor sets of set_layout(). Chosen once per engine, as every pipeline's
// layout must match how its descriptors are supplied.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <volk.h>

#include "kernels/registry.hpp"
#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vk/instance.hpp"
#include "vkgemm/statistics.hpp"

namespace vkgemm::kernels {

class Pipelines {
 public:
  Pipelines(const vk::Instance& instance, const vk::Device& device, bool capture_statistics, bool push_descriptors);

  VkDescriptorSetLayout set_layout() const noexcept { return set_layout_.get(); }
  VkPipelineLayout layout() const noexcept { return layout_.get(); }
  bool push_descriptors() const noexcept { return push_descriptors_; }
  // The operands of the next dispatches as set 0, the way this engine's layout takes them: `writes`
  // (kGemmBindings of them, bindings 0 to 4 in order) pushed with a push layout, else `set` bound.
  void bind(VkCommandBuffer cmd, VkDescriptorSet set, const VkWriteDescriptorSet* writes) const;
  VkPipeline get(const LaunchShape& shape);
  // Builds the pipelines of `shapes` that are not built yet, `threads` at a time (0: one per hardware
  // thread, at most kMaxThreads), and returns how many it built. The first error is thrown after every
  // thread has finished. The store is the caller's to guard (the engine's lock): only create() runs on the
  // helper threads, and the lookups of get() take no lock of their own.
  size_t prepare(const std::vector<LaunchShape>& shapes, unsigned threads);
  // Drivers compile side by side, one pipeline a thread; each thread holds a compiler's memory, and a
  // sweep's 60-odd pipelines on 16 threads already wait mostly on the slowest one (up to 15 s on NVIDIA).
  static constexpr unsigned kMaxThreads = 16;
  // How many pipelines this object has created, by get() and prepare() (for the tests: a pipeline built
  // twice, or not built up front, shows here).
  size_t created() const noexcept { return created_.load(); }
  // The driver's statistics of get(shape)'s pipeline, labelled with `pass`; needs capture_statistics.
  std::vector<PipelineStatistic> statistics(const LaunchShape& shape, const std::string& pass);

 private:
  using Key = std::pair<std::string, std::vector<uint32_t>>;
  static Key key_of(const LaunchShape& shape);  // the one rule naming a pipeline: shader and constant values
  VkShaderModule module(const std::string& shader);  // made once per shader variant
  vk::DeviceHandle<VkPipeline> create(const LaunchShape& shape, VkShaderModule module) const;
  const vk::Instance& instance_;
  const vk::Device& device_;
  bool capture_statistics_ = false;
  bool push_descriptors_ = false;
  vk::DeviceHandle<VkDescriptorSetLayout> set_layout_;
  vk::DeviceHandle<VkPipelineLayout> layout_;
  vk::DeviceHandle<VkPipelineCache> cache_;
  std::map<std::string, vk::DeviceHandle<VkShaderModule>> modules_;
  std::map<Key, vk::DeviceHandle<VkPipeline>> pipelines_;
  mutable std::atomic<size_t> created_{0};
};

}  // namespace vkgemm::kernels
