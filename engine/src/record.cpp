// Recording one BLAS GEMM into a command buffer: argument checks, the column-major to row-major turn,
// descriptor set and timestamp queries (owned by the recording), push constants and dispatches.
#include <cstring>

#include <fmt/format.h>

#include "engine_impl.hpp"
#include "kernels/push_constants.hpp"
#include "kernels/registry.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::detail {
namespace {

constexpr uint32_t kMaxRepeat = 100000;

// One operand as the kernel sees it (row-major, after the column-major turn).
struct Operand {
  VulkanBufferRange range;
  OperandExtent extent;
  VkDescriptorBufferInfo binding{};
  uint32_t element_offset = 0;
  uint64_t element_bytes = 0;
};

void put_scalar(unsigned char* at, DataType type, double v) {
  switch (type) {
    case DataType::f32: { const float f = static_cast<float>(v); std::memcpy(at, &f, 4); break; }
    case DataType::i32: { const int32_t i = static_cast<int32_t>(v); std::memcpy(at, &i, 4); break; }
    case DataType::f64: std::memcpy(at, &v, 8); break;
    case DataType::f16: break;  // never a scalar type: f16 products take f32 scalars (scalar_type)
  }
}

// The type alpha and beta reach the shader in (gemm_interface.glsl's SCALAR_T): f32 for f16 inputs.
DataType scalar_type(DataType input) { return input == DataType::f16 ? DataType::f32 : input; }

}  // namespace

void EngineImpl::check_binding_fits(const char* what, uint64_t bytes) const {
  const auto& info = physical.info;
  if (bytes + physical.storage_offset_alignment > info.max_storage_buffer_range) {
    throw Error(ErrorCode::too_large,
                fmt::format("{} spans {} bytes; {} binds at most {} bytes (maxStorageBufferRange)", what, bytes,
                            info.name, info.max_storage_buffer_range));
  }
}

std::unique_ptr<RecordingImpl> EngineImpl::record(VkCommandBuffer cmd, const GemmDesc& desc,
                                                  const VulkanBufferRange (&ops)[3], const GemmOptions& requested) {
  check_gemm(desc);
  if (requested.repeat == 0 || requested.repeat > kMaxRepeat || requested.warmup > kMaxRepeat) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: repeat must be 1 to {} and warmup 0 to {} (got {} and {})", kMaxRepeat, kMaxRepeat,
                            requested.repeat, requested.warmup));
  }
  if (desc.beta != 0.0 && requested.repeat + requested.warmup > 1) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: with beta = {} every dispatch updates C in place, so warmup + repeat must be 1 "
                            "(got {} + {})", desc.beta, requested.warmup, requested.repeat));
  }
  const DataType type = desc.type;
  const kernels::Types types{type, output_type(desc), requested.f16_accumulate};
  const auto& info = physical.info;
  const GemmOptions& options = requested;
  kernels::check_supported(info, tuning, types, options);
  if (!cmd) throw Error(ErrorCode::invalid_argument, "gemm: the command buffer is VK_NULL_HANDLE");

  const char names[3] = {'A', 'B', 'C'};
  Operand op[3];
  for (int i = 0; i < 3; ++i) {
    Operand& o = op[i];
    const uint64_t es = o.element_bytes = element_size(i == 2 ? types.output : type);
    o.range = ops[i];
    o.extent = operand_extent(desc, names[i]);
    const uint64_t bytes = o.extent.elements * es;
    if (o.range.buffer == VK_NULL_HANDLE) {
      throw Error(ErrorCode::invalid_argument, fmt::format("gemm: {} has no buffer", names[i]));
    }
    if (o.range.offset % es) {
      throw Error(ErrorCode::invalid_argument, fmt::format("gemm: {}'s offset {} is not a multiple of the {}-byte "
                                                           "element", names[i], o.range.offset, es));
    }
    if (bytes > o.range.size) {
      throw Error(ErrorCode::buffer_too_small,
                  fmt::format("gemm: {} ({} {}x{}, ld {}, batch {} with stride {}) needs bytes up to {}; its "
                              "buffer has {} bytes", names[i], desc.layout == Layout::row_major ? "row-major" : "column-major",
                              o.extent.outer, o.extent.inner, o.extent.ld, desc.batch, o.extent.stride,
                              o.range.offset + bytes, o.range.offset + o.range.size));
    }
    check_binding_fits(fmt::format("gemm: {}", names[i]).c_str(), bytes);
  }

  auto rec = std::make_unique<RecordingImpl>();
  rec->engine = this;
  rec->repeat = options.repeat;
  if (desc.m == 0 || desc.n == 0 || desc.batch == 0) return rec;  // nothing to do, as the reference BLAS

  // Column-major: C^T = op(B)^T op(A)^T, and a column-major X is the row-major X^T with the same ld, so
  // swapping the operands (and m with n) while keeping each one's op gives the row-major problem.
  uint32_t m = static_cast<uint32_t>(desc.m), n = static_cast<uint32_t>(desc.n);
  Op op_a = desc.op_a, op_b = desc.op_b;
  if (desc.layout == Layout::col_major) {
    std::swap(op[0], op[1]);
    std::swap(m, n);
    std::swap(op_a, op_b);
  }
  // alpha = 0 or k = 0: C = beta C, A and B are not read; bind C in their place (nothing reads it there).
  const bool reads_ab = desc.alpha != 0.0 && desc.k != 0;
  const uint32_t k = reads_ab ? static_cast<uint32_t>(desc.k) : 0;
  if (!reads_ab) op[0].range = op[1].range = op[2].range, op[0].extent = op[1].extent = op[2].extent;
  for (auto& o : op) {
    const uint64_t align = physical.storage_offset_alignment, es = o.element_bytes;
    const uint64_t start = o.range.offset - o.range.offset % align;
    o.binding = {o.range.buffer, start, o.range.offset - start + o.extent.elements * es};
    o.element_offset = static_cast<uint32_t>((o.range.offset - start) / es);
  }

  if (uint64_t(desc.batch) > info.max_workgroup_count[2]) {
    throw Error(ErrorCode::too_large, fmt::format("gemm: batch {} exceeds {}'s maxComputeWorkGroupCount[2] = {}",
                                                  desc.batch, info.name, info.max_workgroup_count[2]));
  }
  kernels::Problem problem;
  problem.types = types;
  problem.m = m, problem.n = n, problem.k = k;
  problem.lda = static_cast<uint32_t>(op[0].extent.ld), problem.ldb = static_cast<uint32_t>(op[1].extent.ld);
  problem.ldc = static_cast<uint32_t>(op[2].extent.ld);
  problem.a_offset = op[0].element_offset, problem.b_offset = op[1].element_offset;
  problem.c_offset = op[2].element_offset;
  problem.trans_a = op_a == Op::t, problem.trans_b = op_b == Op::t;
  problem.stride_a = static_cast<uint32_t>(op[0].extent.stride), problem.stride_b = static_cast<uint32_t>(op[1].extent.stride);
  problem.stride_c = static_cast<uint32_t>(op[2].extent.stride);
  problem.batch = static_cast<uint32_t>(desc.batch);
  const kernels::Plan plan = kernels::plan(info, tuning, options, problem);
  rec->kernel = plan.kernel;
  rec->config = plan.description;
  const VkPipeline pipeline = pipelines->get(plan.main);
  const VkPipeline reduce_pipeline = plan.splits > 1 ? pipelines->get(plan.reduce) : VK_NULL_HANDLE;

  kernels::GemmPushConstants push{};
  push.m = m, push.n = n, push.k = k;
  push.lda = problem.lda, push.ldb = problem.ldb, push.ldc = problem.ldc;
  push.a_offset = problem.a_offset, push.b_offset = problem.b_offset, push.c_offset = problem.c_offset;
  push.stride_a = problem.stride_a, push.stride_b = problem.stride_b, push.stride_c = problem.stride_c;
  push.batch = problem.batch;
  push.flags = (op_a == Op::t ? kernels::kTransA : 0u) | (op_b == Op::t ? kernels::kTransB : 0u) |
               (desc.beta == 0.0 ? kernels::kBetaZero : 0u) | plan.flags;
  push.k_split = plan.k_split;
  put_scalar(push.scalars, scalar_type(type), desc.alpha);
  put_scalar(push.scalars + element_size(scalar_type(type)), scalar_type(type), desc.beta);

  // Split-K: the main pass writes raw partial sums to a workspace the recording owns (slice-major per
  // batch entry, m x n each, row stride n); the reduce pass adds them into C with alpha and beta.
  VkDescriptorBufferInfo workspace_binding{};
  kernels::GemmPushConstants reduce_push{};
  if (plan.splits > 1) {
    const uint64_t slice = uint64_t{m} * n;
    const uint64_t bytes = slice * plan.splits * static_cast<uint64_t>(desc.batch) * op[2].element_bytes;
    check_binding_fits("gemm: the split-K workspace", bytes);
    rec->workspace = create_buffer(bytes, "vkgemm split-K workspace");
    workspace_binding = {Access::impl(rec->workspace)->alloc.buffer.get(), 0, bytes};
    reduce_push = push;
    push.ldc = n, push.c_offset = 0, push.split_stride = static_cast<uint32_t>(slice);
    reduce_push.k = plan.splits;
    reduce_push.lda = n, reduce_push.a_offset = 0, reduce_push.stride_a = 0;
    reduce_push.split_stride = static_cast<uint32_t>(slice);
    reduce_push.flags &= ~(kernels::kTransA | kernels::kTransB);
  }

  // The recording's own descriptor pool: nothing shared, so recordings need no lock while they live.
  const auto& t = device->table();
  const VkDevice dev = device->get();
  const uint32_t sets = plan.splits > 1 ? 2 : 1;
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3 * sets};
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = sets;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  vk::check(t.vkCreateDescriptorPool(dev, &pool_info, nullptr, &pool), "vkCreateDescriptorPool");
  rec->descriptors = vk::DeviceHandle<VkDescriptorPool>(t, dev, pool);
  const auto make_set = [&](const VkDescriptorBufferInfo* const (&buffers)[3]) {
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
      writes[i].pBufferInfo = buffers[i];
    }
    t.vkUpdateDescriptorSets(dev, 3, writes, 0, nullptr);
    return set;
  };
  const VkDescriptorSet set = plan.splits > 1
                                  ? make_set({&op[0].binding, &op[1].binding, &workspace_binding})
                                  : make_set({&op[0].binding, &op[1].binding, &op[2].binding});
  const VkDescriptorSet reduce_set =
      plan.splits > 1 ? make_set({&workspace_binding, &workspace_binding, &op[2].binding}) : VK_NULL_HANDLE;

  const uint32_t queries = info.timestamps ? 2 * options.repeat : 0;
  if (queries) {
    VkQueryPoolCreateInfo qinfo{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qinfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qinfo.queryCount = queries;
    VkQueryPool qpool = VK_NULL_HANDLE;
    vk::check(t.vkCreateQueryPool(dev, &qinfo, nullptr, &qpool), "vkCreateQueryPool");
    rec->queries = vk::DeviceHandle<VkQueryPool>(t, dev, qpool);
  }
  const VkQueryPool qpool = rec->queries.get();

  // Each dispatch writes C (and reads it when beta != 0), or the workspace the next pass reads: the next
  // one waits for it, which also keeps the timestamps of consecutive products apart.
  const auto between_dispatches = [&] {
    memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  };
  const auto one_product = [&] {
    t.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    t.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines->layout(), 0, 1, &set, 0, nullptr);
    t.vkCmdPushConstants(cmd, pipelines->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
    t.vkCmdDispatch(cmd, plan.grid[0], plan.grid[1], plan.grid[2]);
    if (plan.splits > 1) {
      between_dispatches();
      t.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, reduce_pipeline);
      t.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines->layout(), 0, 1, &reduce_set, 0,
                                nullptr);
      t.vkCmdPushConstants(cmd, pipelines->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(reduce_push),
                           &reduce_push);
      t.vkCmdDispatch(cmd, plan.reduce_grid[0], plan.reduce_grid[1], plan.reduce_grid[2]);
    }
  };
  if (qpool) t.vkCmdResetQueryPool(cmd, qpool, 0, queries);
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
