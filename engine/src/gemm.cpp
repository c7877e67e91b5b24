// C = A * B: argument checks, binding, recording with timestamps, and the host-memory convenience.
#include <algorithm>
#include <chrono>
#include <cstring>

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

void EngineImpl::check_matrix_fits(const char* what, uint32_t rows, uint32_t cols, DataType type) const {
  const uint64_t bytes = uint64_t{rows} * cols * element_size(type);
  const auto& info = physical.info;
  if (bytes + physical.storage_offset_alignment > info.max_storage_buffer_range) {
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
  for (int i = 0; i < 3; ++i) {
    const MatrixRef& r = *refs[i];
    const DataType type = r.type;
    const uint64_t es = element_size(type);
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
    check_matrix_fits(names[i], r.rows, r.cols, type);
  }
  if (options.repeat == 0 || options.repeat > kMaxRepeat || options.warmup > kMaxRepeat) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: repeat must be 1 to {} and warmup 0 to {} (got {} and {})", kMaxRepeat, kMaxRepeat,
                            options.repeat, options.warmup));
  }
  const auto& info = physical.info;
  kernels::check_supported(info, options.kernel, types, options);

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

  const kernels::LaunchShape shape = kernels::launch_shape(info, options.kernel, types, options, m, n, k);
  const auto grid = kernels::dispatch_grid(info, shape, m, n);
  const VkPipeline pipeline = pipelines->get(options.kernel, types, shape);

  Binding bindings[3];
  for (int i = 0; i < 3; ++i) bindings[i] = bind(*buffers[i], *refs[i], physical.storage_offset_alignment);
  kernels::GemmPushConstants push{m, n, k, a.cols, b.cols, c.cols,
                                  bindings[0].element_offset, bindings[1].element_offset, bindings[2].element_offset};

  VkDescriptorSetLayout set_layout = pipelines->set_layout();
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = descriptor_pool.get();
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  vk::check(t.vkAllocateDescriptorSets(device->get(), &alloc, &set), "vkAllocateDescriptorSets");
  struct SetGuard {  // the set goes back to the pool however this function ends
    const VolkDeviceTable& t;
    VkDevice dev;
    VkDescriptorPool pool;
    VkDescriptorSet set;
    ~SetGuard() { t.vkFreeDescriptorSets(dev, pool, 1, &set); }
  } guard{t, device->get(), descriptor_pool.get(), set};
  VkWriteDescriptorSet writes[3];
  for (uint32_t i = 0; i < 3; ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &bindings[i].info;
  }
  t.vkUpdateDescriptorSets(device->get(), 3, writes, 0, nullptr);

  const uint32_t queries = info.timestamps ? 2 * options.repeat : 0;
  const VkQueryPool pool = queries ? timestamp_pool(queries) : VK_NULL_HANDLE;
  const auto between_dispatches = [&](VkCommandBuffer cmd) {
    // C is written by every dispatch: each one waits for the last (and timestamps stay apart).
    memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT);
  };
  timing.submit_wait_ms = submitter->run([&](VkCommandBuffer cmd) {
    // Uploads and earlier products finish before this one reads or writes.
    memory_barrier(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_SHADER_READ_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    if (pool) t.vkCmdResetQueryPool(cmd, pool, 0, queries);
    t.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    t.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines->layout(), 0, 1, &set, 0, nullptr);
    t.vkCmdPushConstants(cmd, pipelines->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
    for (uint32_t w = 0; w < options.warmup; ++w) {
      t.vkCmdDispatch(cmd, grid[0], grid[1], grid[2]);
      between_dispatches(cmd);
    }
    for (uint32_t r = 0; r < options.repeat; ++r) {
      if (r > 0) between_dispatches(cmd);
      if (pool) t.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, pool, 2 * r);
      t.vkCmdDispatch(cmd, grid[0], grid[1], grid[2]);
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
  check_matrix_fits("A", m, k, type);
  check_matrix_fits("B", k, n, type);
  check_matrix_fits("C", m, n, output);
  kernels::check_supported(physical.info, options.kernel, {type, output, options.f16_accumulate}, options);
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
