// The engine's private state, shared by engine.cpp (set-up, buffers, transfers) and gemm.cpp (products).
#pragma once

#include <memory>
#include <optional>

#include "device_query.hpp"
#include "kernels/pipelines.hpp"
#include "tuning/tuning_table.hpp"
#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vk/instance.hpp"
#include "vk/memory.hpp"
#include "vk/submitter.hpp"
#include "vkgemm/engine.hpp"

namespace vkgemm::detail {

struct BufferImpl {
  vk::AllocatedBuffer alloc;
  const EngineImpl* owner = nullptr;
};

struct EngineImpl {
  explicit EngineImpl(const EngineOptions& options);

  Buffer create_buffer(uint64_t bytes, std::string_view name);
  void write(Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);
  void read(const Buffer& buffer, uint64_t offset, void* data, uint64_t bytes);
  void fill(Buffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word);
  GemmTiming gemm(const MatrixRef& a, const MatrixRef& b, const MatrixRef& c, const GemmOptions& options);
  GemmTiming gemm_host(DataType type, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b, void* c,
                       const GemmOptions& options);

  // Throws unless `buffer` is a live buffer of this engine.
  const BufferImpl& owned(const Buffer& buffer, const char* what) const;
  // Throws too_large when a rows x cols matrix of `type` cannot be bound as one storage buffer.
  void check_matrix_fits(const char* what, uint32_t rows, uint32_t cols, DataType type) const;
  VkQueryPool timestamp_pool(uint32_t queries);

  // Declaration order is destruction order in reverse: everything below `device` dies before it.
  vk::ValidationSink sink;
  tuning::Table tuning;
  std::unique_ptr<vk::Instance> instance;
  PhysicalDevice physical;
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<vk::MemoryAllocator> memory;
  std::unique_ptr<vk::Submitter> submitter;
  std::unique_ptr<kernels::Pipelines> pipelines;
  vk::DeviceHandle<VkDescriptorPool> descriptor_pool;
  vk::DeviceHandle<VkQueryPool> query_pool;
  uint32_t query_capacity = 0;
  std::optional<vk::AllocatedBuffer> staging;
  Buffer host_a, host_b, host_c;  // reused by the host-memory gemm, grown on demand
  Buffer workspace;               // split-K partial sums, grown on demand
};

// One global memory barrier from `src` stages/accesses to `dst` ones.
void memory_barrier(const VolkDeviceTable& t, VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                    VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

}  // namespace vkgemm::detail
