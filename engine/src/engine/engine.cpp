// Engine set-up, buffers and transfers. The products themselves are in gemm.cpp.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "engine/environment.hpp"
#include "engine/host_blocks.hpp"
#include "tuning/tuning_file.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace detail {

EngineImpl::EngineImpl(const EngineOptions& asked) {
  const EngineOptions options = with_environment(asked);
  sink.callback = options.on_validation_message;
  for (const auto& [name, json] : tuning::builtin_tables()) tuning.add_json(json, "built-in tuning table " + name);
  if (options.tuning_file != "none" && !options.tuning_file.empty()) {
    tuning::load_user_tuning_file(tuning, options.tuning_file);
  }
  instance = std::make_unique<vk::Instance>(options.validation, &sink);
  auto devices = enumerate_devices(instance->get(), instance->api_version());
  const DeviceChoice choice = choose_device(device_infos(devices), environment_device_request(asked));
  physical = std::move(devices[choice.index]);
  device_reason = choice.reason;
  apply_test_limits(physical.info);
  device = std::make_unique<vk::Device>(physical);
  memory = std::make_unique<vk::MemoryAllocator>(*instance, *device, physical.info);
  buffer_pool = std::make_unique<BufferPool>(physical.info.device_local_memory);
  default_wait = environment_wait_mode();
  submitter = std::make_unique<vk::Submitter>(*device, device->timeline(),
                                              vk::wait_spin(WaitMode::automatic, default_wait, physical.info.type));
  pipelines = std::make_unique<kernels::Pipelines>(*instance, *device, physical.info.pipeline_statistics,
                                                   physical.info.push_descriptor);
  host_copies = std::make_unique<HostCopies>(*device, *memory, *submitter, physical.info, environment_host_copies());
}

Buffer EngineImpl::create_buffer(uint64_t bytes, std::string_view name) {
  auto impl = std::make_unique<BufferImpl>();
  const std::string label = name.empty() ? std::string("vkgemm buffer") : std::string(name);
  if (auto kept = buffer_pool->take(bytes)) {
    impl->alloc = std::move(*kept);
  } else {
    try {
      impl->alloc = memory->create(bytes, vk::MemoryUse::storage, label.c_str());
    } catch (const Error& e) {
      // The kept buffers hold memory the driver may need: released, the allocation is tried once more.
      if (e.code() != ErrorCode::out_of_memory || buffer_pool->clear() == 0) throw;
      impl->alloc = memory->create(bytes, vk::MemoryUse::storage, label.c_str());
    }
  }
  impl->owner = this;
  impl->pool = buffer_pool.get();
  impl->id = next_buffer_id.fetch_add(1, std::memory_order_relaxed);
  return Buffer(std::move(impl));
}

const BufferImpl& EngineImpl::owned(const Buffer& buffer, const char* what) const {
  if (!buffer.impl_) throw Error(ErrorCode::invalid_argument, fmt::format("{}: the buffer is empty", what));
  if (buffer.impl_->owner != this) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: the buffer belongs to another engine", what));
  }
  return *buffer.impl_;
}

void check_range(const char* what, uint64_t offset, uint64_t bytes, uint64_t size) {
  if (offset > ~uint64_t{0} - bytes) {  // the end past 2^64: offset + bytes would wrap to a small number
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: offset {} plus {} bytes overflows 64 bits, outside the {}-byte buffer", what, offset,
                            bytes, size));
  }
  if (offset > size || bytes > size - offset) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: bytes {}..{} lie outside the {}-byte buffer", what, offset, offset + bytes, size));
  }
}

void EngineImpl::write(Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
  device->check_alive("write");  // mapped memory of a lost device holds nothing to trust
  const auto& dst = owned(buffer, "write");
  check_range("write", offset, bytes, dst.alloc.size);
  if (bytes == 0) return;
  if (!data) throw Error(ErrorCode::invalid_argument, "write: the source pointer is null");
  host_copies->upload(data, bytes, dst.alloc, offset);
}

void EngineImpl::read(const Buffer& buffer, uint64_t offset, void* data, uint64_t bytes) {
  device->check_alive("read");  // mapped memory of a lost device holds nothing to trust
  const auto& src = owned(buffer, "read");
  check_range("read", offset, bytes, src.alloc.size);
  if (bytes == 0) return;
  if (!data) throw Error(ErrorCode::invalid_argument, "read: the destination pointer is null");
  host_copies->download(src.alloc, offset, data, bytes);
}

void EngineImpl::fill(Buffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word) {
  device->check_alive("fill");
  const auto& dst = owned(buffer, "fill");
  check_range("fill", offset, bytes, dst.alloc.size);
  if (offset % 4 || bytes % 4) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("fill: offset {} and size {} must be multiples of 4 bytes", offset, bytes));
  }
  if (bytes == 0) return;
  const auto& t = device->table();
  submitter->run([&](VkCommandBuffer cmd) { vk::record_fill(t, cmd, dst.alloc.buffer.get(), offset, bytes, word); });
}

}  // namespace detail

// ---- the public classes forward to the implementation ----

Buffer::Buffer() noexcept = default;
Buffer::~Buffer() = default;
Buffer::Buffer(Buffer&&) noexcept = default;
Buffer& Buffer::operator=(Buffer&&) noexcept = default;
Buffer::Buffer(std::unique_ptr<detail::BufferImpl> impl) noexcept : impl_(std::move(impl)) {}
uint64_t Buffer::size() const noexcept { return impl_ ? impl_->alloc.size : 0; }

Engine::Engine(const EngineOptions& options) : impl_(std::make_unique<detail::EngineImpl>(options)) {}
Engine::Engine(std::unique_ptr<detail::EngineImpl> impl) noexcept : impl_(std::move(impl)) {}
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

std::vector<DeviceInfo> Engine::devices() {
  vk::ValidationSink sink;
  vk::Instance instance(false, &sink);
  return device_infos(enumerate_devices(instance.get(), instance.api_version()));
}

DeviceChoice Engine::choose_device(const EngineOptions& options) {
  return detail::choose_device(devices(), detail::environment_device_request(options));
}

const DeviceInfo& Engine::device() const noexcept { return impl_->physical.info; }
const std::string& Engine::device_reason() const noexcept { return impl_->device_reason; }
uint64_t Engine::validation_message_count() const noexcept { return impl_->sink.count.load(); }

Buffer Engine::create_buffer(uint64_t bytes, std::string_view debug_name) {
  std::lock_guard guard(impl_->lock);
  return impl_->create_buffer(bytes, debug_name);
}
void Engine::write(Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
  std::lock_guard guard(impl_->lock);
  impl_->write(buffer, offset, data, bytes);
}
void Engine::read(const Buffer& buffer, uint64_t offset, void* data, uint64_t bytes) {
  std::lock_guard guard(impl_->lock);
  impl_->read(buffer, offset, data, bytes);
}
void Engine::fill(Buffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word) {
  std::lock_guard guard(impl_->lock);  // as every member: the submitter and host copies are the engine's one each
  impl_->fill(buffer, offset, bytes, word);
}
void Engine::check_supported(DataType type, const GemmOptions& options) const {
  check_supported(type, default_output_type(type), options);
}
void Engine::check_supported(DataType input, DataType output, const GemmOptions& options) const {
  kernels::check_supported(impl_->physical.info, impl_->tuning, {input, output, options.f16_accumulate}, options);
}
void Engine::check_fits(const GemmDesc& desc, const GemmOptions& options) const {
  impl_->admit(desc, options);  // the door's checks first: the schedule trusts them
  detail::check_fits(desc, options, impl_->physical.info, &impl_->tuning);
}
void Engine::check_fits_host(const GemmDesc& desc, const GemmOptions& options) const {
  impl_->admit(desc, options);
  try {
    detail::check_fits(desc, options, impl_->physical.info, &impl_->tuning);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::too_large || !detail::host_block_cut(desc, options, impl_->physical.info)) throw;
  }
}
GemmTiming Engine::gemm(const MatrixRef& a, const MatrixRef& b, const MatrixRef& c, const GemmOptions& options) {
  std::lock_guard guard(impl_->lock);
  return impl_->gemm(a, b, c, options);
}
GemmTiming Engine::gemm(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b, void* c,
                        const GemmOptions& options) {
  GemmDesc desc;
  desc.type = type;
  desc.m = m, desc.n = n, desc.k = k;
  std::lock_guard guard(impl_->lock);
  return impl_->gemm_host(desc, a, b, c, nullptr, options);
}
GemmTiming Engine::gemm(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                        const void* b, void* c, const GemmOptions& options) {
  GemmDesc desc;
  desc.type = input;
  desc.c_type = output;
  desc.m = m, desc.n = n, desc.k = k;
  std::lock_guard guard(impl_->lock);
  return impl_->gemm_host(desc, a, b, c, nullptr, options);
}
GemmTiming Engine::gemm(const GemmDesc& desc, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c,
                        const GemmOptions& options) {
  std::lock_guard guard(impl_->lock);
  return impl_->gemm(desc, {a, b, c}, options);
}
GemmTiming Engine::gemm(const GemmDesc& desc, const void* a, const void* b, void* c, const GemmOptions& options) {
  std::lock_guard guard(impl_->lock);
  return impl_->gemm_host(desc, a, b, c, nullptr, options);
}
GemmTiming Engine::gemm(const GemmDesc& desc, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c,
                        const GemmOptions& options, const BufferOffset& bias) {
  std::lock_guard guard(impl_->lock);
  return impl_->gemm(desc, {a, b, c, bias}, options);
}
GemmTiming Engine::gemm(const GemmDesc& desc, const void* a, const void* b, void* c, const GemmOptions& options,
                        const void* bias) {
  std::lock_guard guard(impl_->lock);
  return impl_->gemm_host(desc, a, b, c, bias, options);
}

}  // namespace vkgemm
