// Recording one BLAS GEMM into a command buffer: the checks at the entry, then the planner's plan
// (plan/planner.hpp) recorded as it is: descriptor sets and timestamp queries (owned by the recording),
// push constants and dispatches.
#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::detail {
namespace {

constexpr uint32_t kMaxRepeat = 100000;

// One planned pass, ready to record.
struct Pass {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  const PassPlan* plan = nullptr;
};

struct PiecePasses {
  Pass main, reduce;  // reduce.plan is null without split-K
};

// The recording's own descriptor pool, with the sets of every pass: nothing shared, so recordings need no
// lock while they live.
std::vector<PiecePasses> bind_passes(EngineImpl& e, RecordingImpl& rec, const ProductPlan& plan,
                                     const VulkanBufferRange (&ops)[3]) {
  const auto& device = e.device;
  const auto& pipelines = e.pipelines;
  const auto& t = device->table();
  const VkDevice dev = device->get();
  uint32_t sets = 0;
  for (const PiecePlan& piece : plan.pieces) sets += piece.reduce ? 2u : 1u;
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3 * sets};
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = sets;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  vk::check(t.vkCreateDescriptorPool(dev, &pool_info, nullptr, &pool), "vkCreateDescriptorPool");
  rec.descriptors = vk::DeviceHandle<VkDescriptorPool>(t, dev, pool);
  const auto make_set = [&](const VkDescriptorBufferInfo (&buffers)[3]) {
    VkDescriptorSetLayout set_layout = pipelines->set_layout();
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = pool;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;  // freed with the pool
    vk::check(t.vkAllocateDescriptorSets(dev, &alloc, &set), "vkAllocateDescriptorSets");
    VkWriteDescriptorSet writes[3];
    for (uint32_t i = 0; i < 3; ++i) {
      writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstSet = set;
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &buffers[i];
    }
    t.vkUpdateDescriptorSets(dev, 3, writes, 0, nullptr);
    return set;
  };
  const VkBuffer workspace = rec.workspace.valid() ? Access::impl(rec.workspace)->alloc.buffer.get() : VK_NULL_HANDLE;
  std::vector<PiecePasses> out(plan.pieces.size());
  for (size_t i = 0; i < plan.pieces.size(); ++i) {
    const PiecePlan& pp = plan.pieces[i];
    const PieceBinding* own[3] = {&pp.piece.a, &pp.piece.b, &pp.piece.c};
    VkDescriptorBufferInfo bindings[3];
    for (size_t b = 0; b < 3; ++b) bindings[b] = {ops[plan.source[b]].buffer, own[b]->offset, own[b]->size};
    out[i].main = {pipelines->get(pp.main.shape), VK_NULL_HANDLE, &pp.main};
    if (pp.reduce) {
      const VkDescriptorBufferInfo space{workspace, 0, pp.workspace_bytes};
      out[i].main.set = make_set({bindings[0], bindings[1], space});
      out[i].reduce = {pipelines->get(pp.reduce->shape), make_set({space, space, bindings[2]}), &*pp.reduce};
    } else {
      out[i].main.set = make_set(bindings);
    }
  }
  return out;
}

void record_dispatches(const EngineImpl& e, VkCommandBuffer cmd, const std::vector<PiecePasses>& passes,
                       VkQueryPool qpool, const GemmOptions& options) {
  const auto& device = e.device;
  const auto& pipelines = e.pipelines;
  const auto& t = device->table();
  // Each dispatch writes C (and reads it when beta != 0), or the workspace the next pass reads: the next
  // one waits for it, which also keeps the timestamps of consecutive products apart.
  const auto between_dispatches = [&] {
    memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  };
  const auto dispatch = [&](const Pass& pass) {
    const PassPlan& p = *pass.plan;
    t.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pass.pipeline);
    t.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines->layout(), 0, 1, &pass.set, 0, nullptr);
    t.vkCmdPushConstants(cmd, pipelines->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(p.push), &p.push);
    t.vkCmdDispatch(cmd, p.grid[0], p.grid[1], p.grid[2]);
  };
  // One product is all its pieces. A barrier between consecutive pieces too: K chunks of one C block
  // read what the previous chunk wrote, split-K pieces reuse the workspace, and pieces of different C
  // blocks may bind overlapping ranges (ldc gaps), which validation cannot tell apart from a race.
  const auto one_product = [&] {
    for (size_t i = 0; i < passes.size(); ++i) {
      if (i > 0) between_dispatches();
      dispatch(passes[i].main);
      if (passes[i].reduce.plan) {
        between_dispatches();
        dispatch(passes[i].reduce);
      }
    }
  };
  if (qpool) t.vkCmdResetQueryPool(cmd, qpool, 0, 2 * options.repeat);
  for (uint32_t w = 0; w < options.warmup; ++w) {
    one_product();
    between_dispatches();
  }
  for (uint32_t r = 0; r < options.repeat; ++r) {
    if (r > 0) between_dispatches();
    if (qpool) t.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qpool, 2 * r);
    one_product();
    if (qpool) t.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qpool, 2 * r + 1);
  }
}

}  // namespace

void EngineImpl::check_run(const GemmDesc& desc, const GemmOptions& options) const {
  if (options.repeat == 0 || options.repeat > kMaxRepeat || options.warmup > kMaxRepeat) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: repeat must be 1 to {} and warmup 0 to {} (got {} and {})", kMaxRepeat, kMaxRepeat,
                            options.repeat, options.warmup));
  }
  if (desc.beta != 0.0 && options.repeat + options.warmup > 1) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: with beta = {} every dispatch updates C in place, so warmup + repeat must be 1 "
                            "(got {} + {})", desc.beta, options.warmup, options.repeat));
  }
}

void EngineImpl::check_buffers(const GemmDesc& desc, const VulkanBufferRange (&ops)[3],
                               const kernels::Types& types) const {
  const char names[3] = {'A', 'B', 'C'};
  for (int i = 0; i < 3; ++i) {
    const uint64_t es = element_size(i == 2 ? types.output : types.input);
    const VulkanBufferRange& range = ops[i];
    const OperandExtent extent = operand_extent(desc, names[i]);
    const uint64_t bytes = extent.elements * es;
    if (range.buffer == VK_NULL_HANDLE) {
      throw Error(ErrorCode::invalid_argument, fmt::format("gemm: {} has no buffer", names[i]));
    }
    if (range.offset % es) {
      throw Error(ErrorCode::invalid_argument, fmt::format("gemm: {}'s offset {} is not a multiple of the {}-byte "
                                                           "element", names[i], range.offset, es));
    }
    if (bytes > range.size) {
      throw Error(ErrorCode::buffer_too_small,
                  fmt::format("gemm: {} ({} {}x{}, ld {}, batch {} with stride {}) needs bytes up to {}; its "
                              "buffer has {} bytes", names[i], desc.layout == Layout::row_major ? "row-major" : "column-major",
                              extent.outer, extent.inner, extent.ld, desc.batch, extent.stride,
                              range.offset + bytes, range.offset + range.size));
    }
  }
}

ProductPlan EngineImpl::plan_call(const GemmDesc& desc, const VulkanBufferRange (&ops)[3],
                                  const GemmOptions& options) const {
  const Placement placement{ops[0].offset, ops[1].offset, ops[2].offset, physical.storage_offset_alignment};
  return plan_product(desc, options, physical.info, tuning, placement);
}

ProductPlan EngineImpl::checked_plan(const GemmDesc& desc, const VulkanBufferRange (&ops)[3],
                                     const GemmOptions& options) const {
  check_gemm(desc);
  check_run(desc, options);
  ProductPlan plan = plan_call(desc, ops, options);
  check_buffers(desc, ops, plan.types);
  return plan;
}

std::unique_ptr<RecordingImpl> EngineImpl::record(VkCommandBuffer cmd, const GemmDesc& desc,
                                                  const VulkanBufferRange (&ops)[3], const GemmOptions& options) {
  const ProductPlan plan = checked_plan(desc, ops, options);
  if (!cmd) throw Error(ErrorCode::invalid_argument, "gemm: the command buffer is VK_NULL_HANDLE");
  return record_plan(cmd, plan, ops, options);
}

std::unique_ptr<RecordingImpl> EngineImpl::record_plan(VkCommandBuffer cmd, const ProductPlan& plan,
                                                       const VulkanBufferRange (&ops)[3], const GemmOptions& options) {
  auto rec = std::make_unique<RecordingImpl>();
  rec->engine = this;
  rec->repeat = options.repeat;
  if (plan.pieces.empty()) return rec;  // nothing to do, as the reference BLAS
  rec->kernel = plan.kernel;
  rec->config = plan.config;
  if (plan.workspace_bytes) rec->workspace = create_buffer(plan.workspace_bytes, "vkgemm split-K workspace");
  const std::vector<PiecePasses> passes = bind_passes(*this, *rec, plan, ops);
  const auto& t = device->table();
  const uint32_t queries = physical.info.timestamps ? 2 * options.repeat : 0;
  if (queries) {
    VkQueryPoolCreateInfo qinfo{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qinfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qinfo.queryCount = queries;
    VkQueryPool qpool = VK_NULL_HANDLE;
    vk::check(t.vkCreateQueryPool(device->get(), &qinfo, nullptr, &qpool), "vkCreateQueryPool");
    rec->queries = vk::DeviceHandle<VkQueryPool>(t, device->get(), qpool);
  }
  record_dispatches(*this, cmd, passes, rec->queries.get(), options);
  rec->recorded = true;
  return rec;
}

GemmTiming RecordingImpl::timing() const {
  GemmTiming timing;
  const auto& info = engine->physical.info;
  timing.gpu_timestamps = info.timestamps;
  timing.kernel = kernel;
  timing.config = config;
  if (!recorded || !queries) return timing;
  const auto& t = engine->device->table();
  const uint32_t count = 2 * repeat;
  std::vector<uint64_t> stamps(count);
  const VkResult r = t.vkGetQueryPoolResults(engine->device->get(), queries.get(), 0, count,
                                             stamps.size() * sizeof(uint64_t), stamps.data(), sizeof(uint64_t),
                                             VK_QUERY_RESULT_64_BIT);
  if (r == VK_NOT_READY) {
    throw Error(ErrorCode::not_ready, "gemm timing: the recorded GEMM has not completed (wait for its submission's "
                                      "fence first)");
  }
  vk::check(r, "vkGetQueryPoolResults");
  const uint64_t mask = info.timestamp_valid_bits >= 64 ? ~0ull : (1ull << info.timestamp_valid_bits) - 1;
  for (uint32_t i = 0; i < repeat; ++i) {
    const uint64_t ticks = (stamps[2 * i + 1] - stamps[2 * i]) & mask;  // masked: survives a wrap
    timing.gpu_ms.push_back(static_cast<double>(ticks) * static_cast<double>(info.timestamp_period_ns) * 1e-6);
  }
  return timing;
}

}  // namespace vkgemm::detail
