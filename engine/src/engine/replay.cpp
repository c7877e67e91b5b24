// An engine plan's own command buffer (Replay, engine_impl.hpp): a call on the operands it was last
// recorded for submits it again as it is, skipping the recording; a call on others records it first.
#include "engine/engine_impl.hpp"
#include "vk/check.hpp"

namespace vkgemm::detail {
namespace {

// A pool of its own holding the one command buffer, which vkBeginCommandBuffer resets when it is recorded again.
void make_replay_buffer(const vk::Device& device, Replay& r) {
  const auto& t = device.table();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = device.queue_family();
  VkCommandPool pool = VK_NULL_HANDLE;
  vk::check(t.vkCreateCommandPool(device.get(), &pool_info, nullptr, &pool), "vkCreateCommandPool");
  vk::DeviceHandle<VkCommandPool> owned(t, device.get(), pool);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  vk::check(t.vkAllocateCommandBuffers(device.get(), &alloc, &cmd), "vkAllocateCommandBuffers");
  r.pool = std::move(owned);
  r.cmd = cmd;
}

// Whether `r` holds the commands for these operands: the same engine buffers (ids, never reused) bound at the
// same ranges. The handles are compared too, though an id implies its handle.
bool same_operands(const Replay& r, const VulkanBufferRange (&ops)[kOperands], const OperandIds& ids) {
  for (size_t i = 0; i < static_cast<size_t>(kOperands); ++i) {
    const VulkanBufferRange& was = r.ops[i];
    if (r.ids[i] != ids[i] || was.buffer != ops[i].buffer || was.offset != ops[i].offset || was.size != ops[i].size) {
      return false;
    }
  }
  return true;
}

}  // namespace

uint64_t EngineImpl::submit_replayed(GemmPlanState& plan, const VulkanBufferRange (&ops)[kOperands], const SubmitSync* sync,
                                     const OperandIds* ids) {
  const auto& t = device->table();
  Replay& r = plan.replay;
  // Every submission of an engine plan is waited for before its call returns, under the engine's lock, so
  // the buffer is idle here; the wait keeps the rule that a pending buffer is neither recorded nor
  // submitted again (it has no SIMULTANEOUS_USE) should a caller ever leave one pending.
  if (r.serial) submitter->wait(r.serial);
  if (!r.cmd) make_replay_buffer(*device, r);
  // The queries are idle (their last submission completed): reset on the host, which spares the GPU a
  // command before a small product's first timestamp and holds for a replay as for a fresh recording.
  const VkQueryPool queries = plan.queries.get();
  const bool host_reset = queries && physical.info.host_query_reset;
  if (host_reset) t.vkResetQueryPool(device->get(), queries, 0, 2 * plan.options.gemm.repeat);
  const bool again = r.recorded && ids && (test_replay_any_operands || same_operands(r, ops, *ids));
  if (again) {
    ++replay_stats.replayed;
  } else {
    r.recorded = false;
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};  // no ONE_TIME_SUBMIT: replayed
    vk::check(t.vkBeginCommandBuffer(r.cmd, &begin), "vkBeginCommandBuffer");
    try {
      // Without push descriptors, the plan's one slot of sets (max_pending 1): written here only.
      record_call(plan, r.cmd, ops, plan.push ? nullptr : plan.slot_sets(0), queries,
                  host_reset ? QueryReset::on_host : QueryReset::in_commands);
    } catch (...) {
      t.vkEndCommandBuffer(r.cmd);
      throw;
    }
    vk::check(t.vkEndCommandBuffer(r.cmd), "vkEndCommandBuffer");
    ++replay_stats.recorded;
    // Operands not in engine buffers (ids null) have no identity to replay by: recorded every call.
    r.recorded = ids != nullptr;
    for (size_t i = 0; i < 3; ++i) r.ops[i] = ops[i];
    if (ids) r.ids = *ids;
  }
  r.serial = submitter->submit_recorded(r.cmd, sync);
  return r.serial;
}

}  // namespace vkgemm::detail
