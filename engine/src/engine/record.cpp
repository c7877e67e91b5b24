// Recording a plan into a command buffer (descriptors, push constants, dispatches, timestamps), record_gemm's
// recording, and reading timestamps back. What is recorded was checked at the door (door.cpp).
#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::detail {
namespace {

// Each dispatch writes C (and reads it when beta != 0), or the workspace the next pass reads: the next
// one waits for it, which also keeps the timestamps of consecutive products apart. An indirect dispatch
// (the emulated product's fallback) also waits for the command an earlier pass wrote.
void between_dispatches(const VolkDeviceTable& t, VkCommandBuffer cmd, bool indirect = false) {
  const VkPipelineStageFlags indirect_stage = indirect ? VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT : 0;
  const VkAccessFlags indirect_access = indirect ? VK_ACCESS_INDIRECT_COMMAND_READ_BIT : 0;
  memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | indirect_stage,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | indirect_access);
}

}  // namespace

void GemmPlanState::record(VkCommandBuffer cmd, const VulkanBufferRange (&ops)[kOperands], const VkDescriptorSet* slot_sets,
                      VkQueryPool qpool, QueryReset reset) {
  const auto& t = engine->device->table();
  const VkBuffer space = workspace.valid() ? Access::impl(workspace)->alloc.buffer.get() : VK_NULL_HANDLE;
  const VkBuffer second = sums.valid() ? Access::impl(sums)->alloc.buffer.get() : VK_NULL_HANDLE;
  // The bindings, computed one way for both paths; only how they reach the command buffer differs.
  for (size_t i = 0; i < bindings.size(); ++i) {
    const BindingSource& b = bindings[i];
    // The operand moved by whole granules from where it was planned: the binding moves as much.
    const uint32_t op = b.source == kSourceBias ? 3 : b.source;  // the caller's operand, where not the workspace
    infos[i] = b.source == kSourceWorkspace ? VkDescriptorBufferInfo{space, b.offset, b.size}
               : b.source == kSourceSums    ? VkDescriptorBufferInfo{second, b.offset, b.size}
                                            : VkDescriptorBufferInfo{ops[op].buffer, b.offset + ops[op].offset - planned[op], b.size};
  }
  if (slot_sets) {
    for (size_t i = 0; i < writes.size(); ++i) writes[i].dstSet = slot_sets[i / kGemmBindings];
    t.vkUpdateDescriptorSets(engine->device->get(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }
  const kernels::Pipelines& pipelines = *engine->pipelines;
  const VkPipelineLayout layout = pipelines.layout();
  // The workspace's previous use (an earlier recording of this plan on the queue) ends before this one.
  if (space) between_dispatches(t, cmd);
  // One product is all its pieces. A barrier between consecutive dispatches: K chunks of one C block read
  // what the previous chunk wrote, split-K passes hand the workspace on, and pieces of different C blocks
  // may bind overlapping ranges (ldc gaps), which validation cannot tell apart from a race.
  const auto one_product = [&] {
    for (size_t i = 0; i < dispatches.size(); ++i) {
      const Dispatch& d = dispatches[i];
      if (i > 0) between_dispatches(t, cmd, d.indirect.has_value());
      t.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline);
      pipelines.bind(cmd, slot_sets ? slot_sets[d.set] : VK_NULL_HANDLE, &writes[size_t{d.set} * kGemmBindings]);
      t.vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(d.pass->push), &d.pass->push);
      if (d.indirect) {
        t.vkCmdDispatchIndirect(cmd, space, *d.indirect);
      } else {
        t.vkCmdDispatch(cmd, d.pass->grid[0], d.pass->grid[1], d.pass->grid[2]);
      }
    }
  };
  const GemmOptions& run = options.gemm;
  if (qpool && reset == QueryReset::in_commands) t.vkCmdResetQueryPool(cmd, qpool, 0, 2 * run.repeat);
  for (uint32_t w = 0; w < run.warmup; ++w) {
    one_product();
    between_dispatches(t, cmd);
  }
  for (uint32_t r = 0; r < run.repeat; ++r) {
    if (r > 0) between_dispatches(t, cmd);
    if (qpool) t.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qpool, 2 * r);
    one_product();
    if (qpool) t.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qpool, 2 * r + 1);
  }
}

std::unique_ptr<RecordingImpl> EngineImpl::record(VkCommandBuffer cmd, const GemmDesc& desc,
                                                  const VulkanBufferRange (&ops)[kOperands], const GemmOptions& options) {
  device->check_alive("record_gemm");
  const CallKey key = plan_key(Door::buffers, desc, options, ops);
  const PlanCache::Found found = find_plan(key);
  if (!found.admitted) admit(desc, options);  // else the door's memo (plan_cache.hpp)
  check_buffers(desc, ops, kernels::types_of(desc, options));
  auto rec = std::make_unique<RecordingImpl>();
  rec->plan = keep_plan(key, found, desc, options, ops, true);
  GemmPlanState& plan = *rec->plan;
  if (!cmd) throw Error(ErrorCode::invalid_argument, "gemm: the command buffer is VK_NULL_HANDLE");
  if (plan.product.pieces.empty()) return rec;  // nothing to do, as the reference BLAS
  std::vector<VkDescriptorSet> sets;  // stays empty where the plan pushes its descriptors
  if (!plan.push) rec->descriptors = make_sets(*this, plan, 1, sets);
  const auto& t = device->table();
  if (physical.info.timestamps && options.timestamps) {
    rec->queries = make_queries(*this, 2 * options.repeat);
    VkEventCreateInfo info{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent event = VK_NULL_HANDLE;
    vk::check(t.vkCreateEvent(device->get(), &info, nullptr, &event), "vkCreateEvent");
    rec->done = vk::DeviceHandle<VkEvent>(t, device->get(), event);
  }
  plan.record(cmd, ops, plan.push ? nullptr : sets.data(), rec->queries.get());
  if (rec->done) t.vkCmdSetEvent(cmd, rec->done.get(), VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  rec->recorded = true;
  return rec;
}

GemmTiming RecordingImpl::timing() const {
  const vk::Device& device = *plan->engine->device;
  device.check_alive("GemmRecording::timing");
  const VkResult status = done ? device.table().vkGetEventStatus(device.get(), done.get()) : VK_EVENT_SET;
  if (status != VK_EVENT_SET && status != VK_EVENT_RESET) device.check(status, "vkGetEventStatus");
  if (status != VK_EVENT_SET) {
    throw Error(ErrorCode::not_ready, "gemm timing: the recorded GEMM has not completed (wait for its submission's "
                                      "fence first)");
  }
  return plan->timing(queries.get());
}

GemmTiming GemmPlanState::timing(VkQueryPool qpool) const {
  GemmTiming timing;
  const auto& info = engine->physical.info;
  timing.gpu_timestamps = info.timestamps;
  timing.kernel = product.kernel;
  timing.config = product.config;
  if (product.pieces.empty() || !qpool) return timing;
  const auto& t = engine->device->table();
  const uint32_t repeat = options.gemm.repeat;
  std::vector<uint64_t> stamps(2 * repeat);
  const VkResult r = t.vkGetQueryPoolResults(engine->device->get(), qpool, 0, 2 * repeat,
                                             stamps.size() * sizeof(uint64_t), stamps.data(), sizeof(uint64_t),
                                             VK_QUERY_RESULT_64_BIT);
  if (r == VK_NOT_READY) {
    throw Error(ErrorCode::not_ready, "gemm timing: the recorded GEMM has not completed (wait for its submission's "
                                      "fence first)");
  }
  engine->device->check(r, "vkGetQueryPoolResults");
  const uint64_t mask = info.timestamp_valid_bits >= 64 ? ~0ull : (1ull << info.timestamp_valid_bits) - 1;
  for (uint32_t i = 0; i < repeat; ++i) {
    const uint64_t ticks = (stamps[2 * i + 1] - stamps[2 * i]) & mask;  // masked: survives a wrap
    timing.gpu_ms.push_back(static_cast<double>(ticks) * static_cast<double>(info.timestamp_period_ns) * 1e-6);
  }
  return timing;
}

}  // namespace vkgemm::detail
