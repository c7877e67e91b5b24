// Recording one BLAS GEMM into a command buffer: argument checks, the column-major to row-major turn,
// the cut into pieces within the device's limits (partition.hpp), descriptor sets and timestamp queries
// (owned by the recording), push constants and dispatches.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "kernels/push_constants.hpp"
#include "kernels/registry.hpp"
#include "plan/partition.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::detail {
namespace {

constexpr uint32_t kMaxRepeat = 100000;

// One operand as the kernel sees it (row-major, after the column-major turn).
struct Operand {
  VulkanBufferRange range;
  OperandExtent extent;
};

// One compute pass of one piece, ready to record.
struct Pass {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  kernels::GemmPushConstants push{};
  std::array<uint32_t, 3> grid{};
};

// One piece of the product (partition.hpp): its main pass and, with split-K, its reduce pass.
struct PieceWork {
  Pass main, reduce;
  bool split = false;
  VkDescriptorBufferInfo bindings[3]{};  // A, B and C from the piece's own start
  uint64_t workspace_bytes = 0;
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

void EngineImpl::check_call(const GemmDesc& desc, const VulkanBufferRange (&ops)[3], const GemmOptions& options) const {
  check_gemm(desc);
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
  const kernels::Types types = kernels::types_of(desc, options);
  kernels::check_supported(physical.info, tuning, types, options);
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

std::unique_ptr<RecordingImpl> EngineImpl::record(VkCommandBuffer cmd, const GemmDesc& desc,
                                                  const VulkanBufferRange (&ops)[3], const GemmOptions& options) {
  check_call(desc, ops, options);
  if (!cmd) throw Error(ErrorCode::invalid_argument, "gemm: the command buffer is VK_NULL_HANDLE");
  const DataType type = desc.type;
  const kernels::Types types = kernels::types_of(desc, options);
  const auto& info = physical.info;
  const uint64_t es = element_size(types.input), c_es = element_size(types.output);
  const char names[3] = {'A', 'B', 'C'};
  Operand op[3];
  for (int i = 0; i < 3; ++i) op[i].range = ops[i], op[i].extent = operand_extent(desc, names[i]);

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

  kernels::Problem problem;
  problem.types = types;
  problem.m = m, problem.n = n, problem.k = k;
  problem.lda = static_cast<uint32_t>(op[0].extent.ld), problem.ldb = static_cast<uint32_t>(op[1].extent.ld);
  problem.ldc = static_cast<uint32_t>(op[2].extent.ld);
  problem.trans_a = op_a == Op::t, problem.trans_b = op_b == Op::t;
  problem.stride_a = static_cast<uint32_t>(op[0].extent.stride), problem.stride_b = static_cast<uint32_t>(op[1].extent.stride);
  problem.stride_c = static_cast<uint32_t>(op[2].extent.stride);
  problem.batch = static_cast<uint32_t>(desc.batch);

  // The kernel and configuration are chosen once, for the whole product, as if the grid had no limit;
  // then the product is cut into pieces within the device's limits (partition.hpp), each planned with
  // that same kernel and configuration pinned (only its grid, split count and vec4 flags differ).
  DeviceInfo unbounded = info;
  unbounded.max_workgroup_count = {~0u, ~0u, ~0u};
  const kernels::Plan whole = kernels::plan(unbounded, tuning, options, problem);
  GemmOptions pinned = options;
  pinned.kernel = whole.kernel;
  Blocking blocking;
  if (whole.kernel == Kernel::blocked) {
    pinned.blocked = whole.blocked;
    pinned.blocked.split_k = std::clamp(whole.splits, 1u, info.max_workgroup_count[2]);
    blocking.rows = whole.blocked.bm, blocking.cols = whole.blocked.bn, blocking.k_step = whole.blocked.bk;
    blocking.z_per_entry = pinned.blocked.split_k;
    if (blocking.z_per_entry > 1) {  // the reduce pass: one invocation per element of C
      blocking.reduce_cols = whole.reduce.workgroup_size[0], blocking.reduce_rows = whole.reduce.workgroup_size[1];
    }
  } else if (kernels::is_matrix_kernel(whole.kernel)) {
    // Pinned to the tile chosen for the whole product (its side along N names it: 64, 128 or 256).
    pinned.tile = whole.main.tile[0];
    blocking.cols = whole.main.tile[0], blocking.rows = whole.main.tile[1];
    blocking.k_step = 64;
    blocking.z_per_entry = whole.splits;
    if (whole.splits > 1) {
      blocking.reduce_cols = whole.reduce.workgroup_size[0], blocking.reduce_rows = whole.reduce.workgroup_size[1];
    }
  } else {
    pinned.tile = whole.main.workgroup_size[0];
    blocking.rows = blocking.cols = blocking.k_step = pinned.tile;
  }
  PartitionLimits limits;
  limits.max_groups = info.max_workgroup_count;
  limits.max_range = info.max_storage_buffer_range;
  limits.offset_alignment = physical.storage_offset_alignment;
  limits.max_k = options.max_k_per_submission;
  limits.device = info.name;
  WholeProduct product;
  product.element_size = es;
  product.c_element_size = c_es;
  product.m = m, product.n = n, product.k = k, product.batch = problem.batch;
  product.lda = problem.lda, product.ldb = problem.ldb, product.ldc = problem.ldc;
  product.stride_a = problem.stride_a, product.stride_b = problem.stride_b, product.stride_c = problem.stride_c;
  product.trans_a = problem.trans_a, product.trans_b = problem.trans_b;
  product.a_start = op[0].range.offset, product.b_start = op[1].range.offset, product.c_start = op[2].range.offset;
  const std::vector<Piece> pieces = partition(product, blocking, limits);

  rec->kernel = whole.kernel;
  rec->config = pieces.size() > 1 ? fmt::format("{}, {} pieces", whole.description, pieces.size()) : whole.description;

  std::vector<PieceWork> work(pieces.size());
  uint64_t workspace_bytes = 0;
  uint32_t sets = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& piece = pieces[i];
    PieceWork& w = work[i];
    kernels::Problem p = problem;
    p.m = piece.m, p.n = piece.n, p.k = piece.k, p.batch = piece.batch;
    p.a_offset = piece.a.element_offset, p.b_offset = piece.b.element_offset, p.c_offset = piece.c.element_offset;
    if (kernels::is_matrix_kernel(whole.kernel)) p.splits = whole.splits;
    const kernels::Plan plan = kernels::plan(info, tuning, pinned, p);
    w.bindings[0] = {op[0].range.buffer, piece.a.offset, piece.a.size};
    w.bindings[1] = {op[1].range.buffer, piece.b.offset, piece.b.size};
    w.bindings[2] = {op[2].range.buffer, piece.c.offset, piece.c.size};
    w.main.pipeline = pipelines->get(plan.main);
    w.main.grid = plan.grid;
    // A K chunk after the first adds to what the earlier ones wrote: beta = 1, and C is read.
    const double beta = piece.first_k ? desc.beta : 1.0;
    kernels::GemmPushConstants& push = w.main.push;
    push = {};
    push.m = p.m, push.n = p.n, push.k = p.k;
    push.lda = p.lda, push.ldb = p.ldb, push.ldc = p.ldc;
    push.a_offset = p.a_offset, push.b_offset = p.b_offset, push.c_offset = p.c_offset;
    push.stride_a = p.stride_a, push.stride_b = p.stride_b, push.stride_c = p.stride_c;
    push.batch = p.batch;
    push.flags = (p.trans_a ? kernels::kTransA : 0u) | (p.trans_b ? kernels::kTransB : 0u) |
                 (beta == 0.0 ? kernels::kBetaZero : 0u) | plan.flags;
    push.k_split = plan.k_split;
    const DataType scalars = scalar_type(type);
    put_scalar(push.scalars, scalars, desc.alpha);
    put_scalar(push.scalars + element_size(scalars), scalars, beta);
    ++sets;
    if (plan.splits > 1) {
      // Split-K: the main pass writes raw partial sums to the recording's workspace (slice-major per batch
      // entry, m x n each, row stride n); the reduce pass adds them into C with alpha and beta. Pieces
      // run one after another, so they share one workspace, as large as the largest needs.
      const uint64_t slice = uint64_t{p.m} * p.n;
      // fp32 partial sums for f16 inputs (coopmat2's split), else C's own type (blocked: f32, f64).
      const uint64_t workspace_es = types.input == DataType::f16 ? 4 : c_es;
      w.workspace_bytes = slice * plan.splits * p.batch * workspace_es;
      workspace_bytes = std::max(workspace_bytes, w.workspace_bytes);
      w.split = true;
      w.reduce.pipeline = pipelines->get(plan.reduce);
      w.reduce.grid = plan.reduce_grid;
      kernels::GemmPushConstants& reduce = w.reduce.push;
      reduce = push;
      push.ldc = p.n, push.c_offset = 0, push.split_stride = static_cast<uint32_t>(slice);
      reduce.k = plan.splits;
      reduce.lda = p.n, reduce.a_offset = 0, reduce.stride_a = 0;
      reduce.split_stride = static_cast<uint32_t>(slice);
      reduce.flags &= ~(kernels::kTransA | kernels::kTransB);
      ++sets;
    }
  }
  if (workspace_bytes) rec->workspace = create_buffer(workspace_bytes, "vkgemm split-K workspace");

  // The recording's own descriptor pool: nothing shared, so recordings need no lock while they live.
  const auto& t = device->table();
  const VkDevice dev = device->get();
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
  for (PieceWork& w : work) {
    if (w.split) {
      const VkDescriptorBufferInfo workspace{Access::impl(rec->workspace)->alloc.buffer.get(), 0, w.workspace_bytes};
      w.main.set = make_set({&w.bindings[0], &w.bindings[1], &workspace});
      w.reduce.set = make_set({&workspace, &workspace, &w.bindings[2]});
    } else {
      w.main.set = make_set({&w.bindings[0], &w.bindings[1], &w.bindings[2]});
    }
  }

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
  const auto dispatch = [&](const Pass& pass) {
    t.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pass.pipeline);
    t.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines->layout(), 0, 1, &pass.set, 0, nullptr);
    t.vkCmdPushConstants(cmd, pipelines->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pass.push), &pass.push);
    t.vkCmdDispatch(cmd, pass.grid[0], pass.grid[1], pass.grid[2]);
  };
  // One product is all its pieces. A barrier between consecutive pieces too: K chunks of one C block
  // read what the previous chunk wrote, split-K pieces reuse the workspace, and pieces of different C
  // blocks may bind overlapping ranges (ldc gaps), which validation cannot tell apart from a race.
  const auto one_product = [&] {
    for (size_t i = 0; i < work.size(); ++i) {
      if (i > 0) between_dispatches();
      dispatch(work[i].main);
      if (work[i].split) {
        between_dispatches();
        dispatch(work[i].reduce);
      }
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
