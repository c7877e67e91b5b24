#include "peak/timed_dispatch.hpp"

#include <algorithm>
#include <cmath>

#include "vk/check.hpp"
#include "vk/commands.hpp"

namespace vkgemm::detail::peak {
namespace {

// The kernel's bindings (src at 0 and 1, dst at 2, and at 3 and 4, the epilogue's bias and the K slices'
// sums, where nothing reads them), and where the engine does not push descriptors, a pool holding one set of the shared layout, written
// with them.
struct Descriptors {
  VkWriteDescriptorSet writes[kGemmBindings];
  vk::DeviceHandle<VkDescriptorPool> pool;
  VkDescriptorSet set = VK_NULL_HANDLE;  // freed with the pool
};

void make_set(const PeakContext& e, Descriptors& out) {
  const auto& t = e.device->table();
  const VkDevice dev = e.device->get();
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kGemmBindings};
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = 1;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  vk::check(t.vkCreateDescriptorPool(dev, &pool_info, nullptr, &pool), "vkCreateDescriptorPool");
  out.pool = vk::DeviceHandle<VkDescriptorPool>(t, dev, pool);
  VkDescriptorSetLayout layout = e.pipelines->set_layout();
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = pool;
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &layout;
  vk::check(t.vkAllocateDescriptorSets(dev, &alloc, &out.set), "vkAllocateDescriptorSets");
  for (VkWriteDescriptorSet& w : out.writes) w.dstSet = out.set;
  t.vkUpdateDescriptorSets(dev, kGemmBindings, out.writes, 0, nullptr);
}

// `kernel` must outlive the result: the writes point at its buffers.
Descriptors make_descriptors(const PeakContext& e, const PeakKernel& kernel) {
  Descriptors out;
  const VkDescriptorBufferInfo* buffers[kGemmBindings] = {&kernel.src, &kernel.src, &kernel.dst, &kernel.dst,
                                                             &kernel.dst};
  for (uint32_t i = 0; i < kGemmBindings; ++i) {
    VkWriteDescriptorSet& w = out.writes[i];
    w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstBinding = i;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = buffers[i];
  }
  if (!e.pipelines->push_descriptors()) make_set(e, out);
  return out;
}

std::vector<double> read_queries(const PeakContext& e, VkQueryPool pool, uint32_t repeat) {
  const auto& info = e.physical.info;
  std::vector<uint64_t> stamps(2 * repeat);
  vk::check(e.device->table().vkGetQueryPoolResults(e.device->get(), pool, 0, 2 * repeat,
                                                    stamps.size() * sizeof(uint64_t), stamps.data(), sizeof(uint64_t),
                                                    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults");
  const uint64_t mask = info.timestamp_valid_bits >= 64 ? ~0ull : (1ull << info.timestamp_valid_bits) - 1;
  std::vector<double> ms;
  for (uint32_t i = 0; i < repeat; ++i) {
    const uint64_t ticks = (stamps[2 * i + 1] - stamps[2 * i]) & mask;  // masked: survives a wrap
    ms.push_back(static_cast<double>(ticks) * static_cast<double>(info.timestamp_period_ns) * 1e-6);
  }
  return ms;
}

}  // namespace

std::vector<double> time_dispatches(const PeakContext& e, const PeakKernel& kernel, uint32_t warmup, uint32_t repeat) {
  const auto& t = e.device->table();
  const VkPipeline pipeline = e.pipelines->get(kernel.shape);
  const Descriptors descriptors = make_descriptors(e, kernel);
  const auto queries = vk::timestamp_queries(*e.device, 2 * std::max(repeat, 1u));
  const VkPipelineLayout layout = e.pipelines->layout();
  // Each dispatch writes dst: the next waits for it (which also keeps the timestamps of consecutive ones apart).
  const auto barrier = [&](VkCommandBuffer cmd) {
    vk::memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  };
  e.submitter->run([&](VkCommandBuffer cmd) {
    // Uploads and fills before this submission are done first.
    vk::memory_barrier(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    t.vkCmdResetQueryPool(cmd, queries.get(), 0, 2 * std::max(repeat, 1u));
    t.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    e.pipelines->bind(cmd, descriptors.set, descriptors.writes);
    t.vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(kernel.push), &kernel.push);
    for (uint32_t i = 0; i < warmup + repeat; ++i) {
      if (i > 0) barrier(cmd);
      const bool timed = i >= warmup;
      const uint32_t q = 2 * (i - warmup);
      if (timed) t.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries.get(), q);
      t.vkCmdDispatch(cmd, kernel.groups, 1, 1);
      if (timed) t.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries.get(), q + 1);
    }
  });
  return repeat ? read_queries(e, queries.get(), repeat) : std::vector<double>{};
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Timing calibrate_and_time(const PeakContext& e, PeakKernel kernel, double target_ms, double warm_ms, uint32_t repeat,
                          uint32_t max_iterations) {
  uint32_t iterations = 1;
  double ms = 0.0;
  for (;;) {
    kernel.push.K = iterations;
    // One untimed dispatch first (some drivers, lavapipe, compile the pipeline at its first dispatch), then
    // the fastest of three: a busy host or a clock still rising only ever makes a dispatch slower.
    const auto times = time_dispatches(e, kernel, 1, 3);
    ms = *std::min_element(times.begin(), times.end());
    if (ms >= target_ms || iterations >= max_iterations) break;
    // Doubling while the time is mostly launch overhead, then a jump to the target with 10% to spare.
    const double scale = ms > 0.05 * target_ms ? 1.1 * target_ms / ms : 2.0;
    const double next = std::min(static_cast<double>(max_iterations), std::ceil(iterations * std::max(scale, 1.1)));
    iterations = std::max(iterations + 1, static_cast<uint32_t>(next));
  }
  const uint32_t warmup = ms > 0.0 ? static_cast<uint32_t>(std::min(10000.0, std::ceil(warm_ms / ms))) : 0;
  Timing out;
  out.target_iterations = iterations;
  out.gpu_ms = time_dispatches(e, kernel, warmup, repeat);
  return out;
}

}  // namespace vkgemm::detail::peak
