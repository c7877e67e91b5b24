// C = A * B: argument checks, binding, recording with timestamps, and the host-memory convenience.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "engine_impl.hpp"
#include "kernels/push_constants.hpp"
#include "kernels/registry.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {

double GemmTiming::median_gpu_ms() const {
  if (gpu_ms.empty()) {
    throw Error(ErrorCode::invalid_argument,
                gpu_timestamps ? "no timed dispatch was run" : "this device's compute queue has no timestamps");
  }
  std::vector<double> sorted = gpu_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  return sorted.size() % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
}

namespace detail {
namespace {

constexpr uint32_t kMaxRepeat = 100000;

// A matrix bound as a storage buffer: the binding starts at an aligned offset, the rest goes in elements.
struct Binding {
  VkDescriptorBufferInfo info{};
  uint32_t element_offset = 0;
};

Binding bind(const BufferImpl& buffer, const MatrixRef& m, uint64_t alignment) {
  const uint64_t es = element_size(m.type);
  const uint64_t start = m.offset - m.offset % alignment;
  Binding b;
  b.info.buffer = buffer.alloc.buffer.get();
  b.info.offset = start;
  b.info.range = m.offset - start + uint64_t{m.rows} * m.cols * es;
  b.element_offset = static_cast<uint32_t>((m.offset - start) / es);
  if (b.info.range == 0) {  // an empty A or B (k = 0, C zeroed by the kernel): bound whole, never read
    b.info.offset = 0;
    b.info.range = VK_WHOLE_SIZE;
    b.element_offset = 0;
  }
  return b;
}

}  // namespace

// A descriptor set of the shared layout pointing at three buffers; back to the pool when it goes.
class DescriptorSet {
 public:
  DescriptorSet(EngineImpl& engine, const VkDescriptorBufferInfo* const (&buffers)[3])
      : t_(engine.device->table()), device_(engine.device->get()), pool_(engine.descriptor_pool.get()) {
    VkDescriptorSetLayout layout = engine.pipelines->set_layout();
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = pool_;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &layout;
    vk::check(t_.vkAllocateDescriptorSets(device_, &alloc, &set_), "vkAllocateDescriptorSets");
    VkWriteDescriptorSet writes[3];
    for (uint32_t i = 0; i < 3; ++i) {
      writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstSet = set_;
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = buffers[i];
    }
    t_.vkUpdateDescriptorSets(device_, 3, writes, 0, nullptr);
  }
  ~DescriptorSet() { t_.vkFreeDescriptorSets(device_, pool_, 1, &set_); }
  DescriptorSet(const DescriptorSet&) = delete;
  DescriptorSet& operator=(const DescriptorSet&) = delete;
  VkDescriptorSet get() const noexcept { return set_; }

 private:
  const VolkDeviceTable& t_;
  VkDevice device_;
  VkDescriptorPool pool_;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
};

void EngineImpl::check_matrix_fits(const char* what, uint32_t rows, uint32_t cols, DataType type) const {
  const auto& info = physical.info;
  // rows * cols * 8 can pass 2^64 for absurd sizes: saturate, so that a wrapped product cannot pass.
  const uint64_t es = element_size(type), elements = uint64_t{rows} * cols;
  const uint64_t bytes = es && elements > ~uint64_t{0} / es ? ~uint64_t{0} : elements * es;
  if (bytes > info.max_storage_buffer_range ||
      physical.storage_offset_alignment > info.max_storage_buffer_range - bytes) {
    throw Error(ErrorCode::too_large,
                fmt::format("{} ({}x{} {}) takes {} bytes; {} binds at most {} bytes (maxStorageBufferRange)", what,
                            rows, cols, to_string(type), bytes, info.name, info.max_storage_buffer_range));
  }
}

VkQueryPool EngineImpl::timestamp_pool(uint32_t queries) {
  if (queries > query_capacity) {
    query_pool.reset();
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = queries;
    VkQueryPool pool = VK_NULL_HANDLE;
    vk::check(device->table().vkCreateQueryPool(device->get(), &info, nullptr, &pool), "vkCreateQueryPool");
    query_pool = vk::DeviceHandle<VkQueryPool>(device->table(), device->get(), pool);
    query_capacity = queries;
  }
  return query_pool.get();
}

GemmTiming EngineImpl::gemm(const MatrixRef& a, const MatrixRef& b, const MatrixRef& c, const GemmOptions& options) {
  const MatrixRef* refs[3] = {&a, &b, &c};
  const char* names[3] = {"A", "B", "C"};
  const BufferImpl* buffers[3];
  for (int i = 0; i < 3; ++i) {
    if (!refs[i]->buffer) throw Error(ErrorCode::invalid_argument, fmt::format("gemm: {} has no buffer", names[i]));
    buffers[i] = &owned(*refs[i]->buffer, names[i]);
  }
  // One type throughout, except f16 inputs, which give C in f32 (fp32 accumulation) or f16.
  const bool mixed_ok = a.type == DataType::f16 && (c.type == DataType::f32 || c.type == DataType::f16);
  if (a.type != b.type || (a.type != c.type && !mixed_ok)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: A, B and C must share one type (or A and B f16 with C f32 or f16); they are {}, "
                            "{}, {}", to_string(a.type), to_string(b.type), to_string(c.type)));
  }
  if (a.cols != b.rows || a.rows != c.rows || b.cols != c.cols) {
    throw Error(ErrorCode::dimension_mismatch,
                fmt::format("gemm: A is {}x{}, B is {}x{}, C is {}x{}; need A m x k, B k x n, C m x n", a.rows, a.cols,
                            b.rows, b.cols, c.rows, c.cols));
  }
  const kernels::Types types{a.type, c.type, options.f16_accumulate};
  // Before any size arithmetic: an out-of-range type or kernel enum is refused here, not divided by.
  kernels::check_supported(physical.info, tuning, types, options);
  for (int i = 0; i < 3; ++i) {
    const MatrixRef& r = *refs[i];
    const DataType type = r.type;
    const uint64_t es = element_size(type);
    check_matrix_fits(names[i], r.rows, r.cols, type);  // first: it bounds the byte count computed next
    if (r.offset % es) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("gemm: {}'s offset {} is not a multiple of the {}-byte element", names[i], r.offset, es));
    }
    const uint64_t bytes = uint64_t{r.rows} * r.cols * es;
    const uint64_t size = buffers[i]->alloc.size;
    if (r.offset > size || bytes > size - r.offset) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("gemm: {} ({}x{} {} at offset {}) needs {} bytes; its buffer has {}", names[i], r.rows,
                              r.cols, to_string(type), r.offset, r.offset + bytes, size));
    }
  }
  if (options.repeat == 0 || options.repeat > kMaxRepeat || options.warmup > kMaxRepeat) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: repeat must be 1 to {} and warmup 0 to {} (got {} and {})", kMaxRepeat, kMaxRepeat,
                            options.repeat, options.warmup));
  }
  const auto& info = physical.info;

  GemmTiming timing;
  timing.gpu_timestamps = info.timestamps;
  const uint32_t m = c.rows, n = c.cols, k = a.cols;
  const auto& t = device->table();
  if (m == 0 || n == 0) return timing;
  // vkCmdFillBuffer writes whole 4-byte words: an f16 C of odd size or offset is zeroed by the kernel instead.
  const bool fillable = c.offset % 4 == 0 && (uint64_t{m} * n * element_size(c.type)) % 4 == 0;
  if (k == 0 && fillable) {  // an empty sum: C is zero, nothing to dispatch
    timing.submit_wait_ms = submitter->run([&](VkCommandBuffer cmd) {
      memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
      t.vkCmdFillBuffer(cmd, buffers[2]->alloc.buffer.get(), c.offset, uint64_t{m} * n * element_size(c.type), 0);
      memory_barrier(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
    });
    return timing;
  }

  Binding bindings[3];
  for (int i = 0; i < 3; ++i) bindings[i] = bind(*buffers[i], *refs[i], physical.storage_offset_alignment);
  const kernels::Problem problem{types, m, n, k, a.cols, b.cols, c.cols,
                                 bindings[0].element_offset, bindings[1].element_offset, bindings[2].element_offset};
  const kernels::Plan plan = kernels::plan(info, tuning, options, problem);
  timing.kernel = plan.kernel;
  timing.config = plan.description;

  // Split-K: the main pass writes its partial sums to the workspace (m x n per slice), the reduce pass
  // adds them into C.
  const uint64_t slice_elements = uint64_t{m} * n;
  VkDescriptorBufferInfo workspace_info{};
  if (plan.splits > 1) {
    const uint64_t bytes = slice_elements * plan.splits * element_size(c.type);
    if (bytes > info.max_storage_buffer_range) {
      throw Error(ErrorCode::too_large, fmt::format("split-K over {} slices needs a {}-byte workspace; {} binds at most "
                                                    "{} bytes (maxStorageBufferRange): use fewer slices",
                                                    plan.splits, bytes, info.name, info.max_storage_buffer_range));
    }
    if (workspace.size() < bytes) {
      workspace = Buffer();
      workspace = create_buffer(bytes, "vkgemm split-K workspace");
    }
    workspace_info = {workspace.impl_->alloc.buffer.get(), 0, bytes};
  }
  const VkPipeline main_pipeline = pipelines->get(plan.main);
  const VkPipeline reduce_pipeline = plan.splits > 1 ? pipelines->get(plan.reduce) : VK_NULL_HANDLE;

  kernels::GemmPushConstants main_push{m, n, k, a.cols, b.cols, c.cols,
                                       bindings[0].element_offset, bindings[1].element_offset,
                                       bindings[2].element_offset, plan.k_split, 0, plan.flags};
  kernels::GemmPushConstants reduce_push{};
  const VkDescriptorBufferInfo* main_set_buffers[3] = {&bindings[0].info, &bindings[1].info, &bindings[2].info};
  const VkDescriptorBufferInfo* reduce_set_buffers[3] = {&workspace_info, &workspace_info, &bindings[2].info};
  if (plan.splits > 1) {
    main_push.ldc = n;
    main_push.c_offset = 0;
    main_push.split_stride = static_cast<uint32_t>(slice_elements);
    main_set_buffers[2] = &workspace_info;
    reduce_push = {m, n, plan.splits, n, n, c.cols, 0, 0, bindings[2].element_offset, 0,
                   static_cast<uint32_t>(slice_elements), 0};
  }
  DescriptorSet main_set(*this, main_set_buffers);
  std::optional<DescriptorSet> reduce_set;
  if (plan.splits > 1) reduce_set.emplace(*this, reduce_set_buffers);

  const uint32_t queries = info.timestamps ? 2 * options.repeat : 0;
  const VkQueryPool pool = queries ? timestamp_pool(queries) : VK_NULL_HANDLE;
  const auto compute_to_compute = [&](VkCommandBuffer cmd) {
    // Each pass waits for the last: C and the workspace are written by every repetition.
    memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT);
  };
  const auto one_product = [&](VkCommandBuffer cmd) {
    t.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, main_pipeline);
    VkDescriptorSet set = main_set.get();
    t.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines->layout(), 0, 1, &set, 0, nullptr);
    t.vkCmdPushConstants(cmd, pipelines->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(main_push), &main_push);
    t.vkCmdDispatch(cmd, plan.grid[0], plan.grid[1], plan.grid[2]);
    if (plan.splits > 1) {
      compute_to_compute(cmd);
      t.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, reduce_pipeline);
      set = reduce_set->get();
      t.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines->layout(), 0, 1, &set, 0, nullptr);
      t.vkCmdPushConstants(cmd, pipelines->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(reduce_push), &reduce_push);
      t.vkCmdDispatch(cmd, plan.reduce_grid[0], plan.reduce_grid[1], plan.reduce_grid[2]);
    }
  };
  timing.submit_wait_ms = submitter->run([&](VkCommandBuffer cmd) {
    // Uploads and earlier products finish before this one reads or writes.
    memory_barrier(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_SHADER_READ_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    if (pool) t.vkCmdResetQueryPool(cmd, pool, 0, queries);
    for (uint32_t w = 0; w < options.warmup; ++w) {
      one_product(cmd);
      compute_to_compute(cmd);
    }
    for (uint32_t r = 0; r < options.repeat; ++r) {
      if (r > 0) compute_to_compute(cmd);
      if (pool) t.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, pool, 2 * r);
      one_product(cmd);
      if (pool) t.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, pool, 2 * r + 1);
    }
    // The result is ready for copies, the host and later kernels.
    memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
  });

  if (pool) {
    std::vector<uint64_t> stamps(queries);
    vk::check(t.vkGetQueryPoolResults(device->get(), pool, 0, queries, stamps.size() * sizeof(uint64_t),
                                      stamps.data(), sizeof(uint64_t),
                                      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
              "vkGetQueryPoolResults");
    const uint64_t mask = info.timestamp_valid_bits >= 64 ? ~0ull : (1ull << info.timestamp_valid_bits) - 1;
    for (uint32_t r = 0; r < options.repeat; ++r) {
      const uint64_t ticks = (stamps[2 * r + 1] - stamps[2 * r]) & mask;  // masked: survives a wrap
      timing.gpu_ms.push_back(static_cast<double>(ticks) * static_cast<double>(info.timestamp_period_ns) * 1e-6);
    }
  }
  return timing;
}

GemmTiming EngineImpl::gemm_host(DataType type, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                                 const void* b, void* c, const GemmOptions& options) {
  const uint64_t es = element_size(type), c_es = element_size(output);
  if (m != 0 && n != 0 && (!c || (k != 0 && (!a || !b)))) {
    throw Error(ErrorCode::invalid_argument, "gemm: a host pointer for A, B or C is null");
  }
  kernels::check_supported(physical.info, tuning, {type, output, options.f16_accumulate}, options);
  check_matrix_fits("A", m, k, type);
  check_matrix_fits("B", k, n, type);
  check_matrix_fits("C", m, n, output);
  GemmTiming timing;
  timing.gpu_timestamps = physical.info.timestamps;
  if (m == 0 || n == 0) return timing;
  if (k == 0) {
    std::memset(c, 0, uint64_t{m} * n * c_es);
    return timing;
  }
  const auto ensure = [&](Buffer& buffer, uint64_t bytes, const char* name) {
    if (buffer.size() < bytes) {
      buffer = Buffer();  // free the old one first: the new one may need its memory
      buffer = create_buffer(bytes, name);
    }
  };
  const uint64_t a_bytes = uint64_t{m} * k * es, b_bytes = uint64_t{k} * n * es, c_bytes = uint64_t{m} * n * c_es;
  ensure(host_a, a_bytes, "vkgemm host A");
  ensure(host_b, b_bytes, "vkgemm host B");
  ensure(host_c, c_bytes, "vkgemm host C");

  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  write(host_a, 0, a, a_bytes);
  write(host_b, 0, b, b_bytes);
  const double upload = std::chrono::duration<double, std::milli>(clock::now() - start).count();
  timing = gemm({&host_a, 0, m, k, type}, {&host_b, 0, k, n, type}, {&host_c, 0, m, n, output}, options);
  start = clock::now();
  read(host_c, 0, c, c_bytes);
  timing.download_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
  timing.upload_ms = upload;
  return timing;
}

}  // namespace detail
}  // namespace vkgemm
