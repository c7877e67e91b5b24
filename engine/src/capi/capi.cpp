// The C ABI (vkgemm/vkgemm.h) over the C++ Engine: argument translation, and every exception turned into a
// status with its sentence kept per thread, and which buffers are whose. The checks are the engine's own, but for
// what only this layer knows: a structure's size, a handle's engine, and the buffer calls' sentences with the fix.
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "vkgemm/beside.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/reference.hpp"
#include "vkgemm/version.hpp"
#include "vkgemm/vkgemm.h"

// An engine and the buffers it made and has not seen destroyed: the registry is how a call knows a buffer
// is this engine's (a pointer of another engine's, or a destroyed one's, is never dereferenced), and how
// destroying the engine frees the device memory of the buffers still alive before the device goes.
struct vkgemm_engine {
  explicit vkgemm_engine(vkgemm::Engine e) : engine(std::move(e)) {}
  vkgemm::Engine engine;
  std::mutex lock;  // guards buffers
  std::unordered_set<const vkgemm_buffer*> buffers;
  // A product or write beside may be in flight (feature 4): the other calls wait for them first (settle).
  std::atomic<bool> in_flight{false};
};

// engine is null once the engine is destroyed: the handle then only awaits vkgemm_buffer_destroy.
struct vkgemm_buffer {
  vkgemm::Buffer buffer;
  vkgemm_engine* engine = nullptr;
};

namespace {

thread_local std::string last_error;

// Runs `body`, returning VKGEMM_OK, or the failure's status with its sentence kept for vkgemm_last_error.
template <class Body>
vkgemm_status guarded(Body&& body) noexcept {
  try {
    body();
    return VKGEMM_OK;
  } catch (const vkgemm::Error& e) {
    last_error = e.what();
    return 1 + static_cast<vkgemm_status>(e.code());
  } catch (const std::exception& e) {
    last_error = fmt::format("vkgemm: internal error: {}", e.what());
  } catch (...) {
    last_error = "vkgemm: internal error (an exception that is no std::exception)";
  }
  return VKGEMM_STATUS_INTERNAL;
}

[[noreturn]] void refuse(std::string_view message) {
  throw vkgemm::Error(vkgemm::ErrorCode::invalid_argument, std::string(message));
}

void check_struct(const void* p, uint32_t given, size_t needed, const char* name) {
  if (!p) refuse(fmt::format("vkgemm: the {} pointer is null", name));
  if (given < needed) {
    refuse(fmt::format("vkgemm: {}.struct_size = {} is smaller than {}, the size this library reads (set it to "
                       "sizeof({}))",
                       name, given, needed, name));
  }
}

template <size_t N>
void copy_text(char (&to)[N], std::string_view from) {
  const size_t n = std::min(from.size(), N - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

vkgemm::DataType to_type(int32_t value, const char* field) {
  if (value < 0 || value > static_cast<int32_t>(vkgemm::DataType::u8)) {
    refuse(fmt::format("vkgemm: {} = {} is no element type (0 f32, 1 i32, 2 f64, 3 f16, 4 bf16, 5 i8, 6 u8)", field,
                       value));
  }
  return static_cast<vkgemm::DataType>(value);
}

vkgemm::Op to_op(int32_t value, const char* field) {
  if (value != 0 && value != 1) refuse(fmt::format("vkgemm: {} = {} is neither 0 (N) nor 1 (T)", field, value));
  return value ? vkgemm::Op::t : vkgemm::Op::n;
}

std::optional<int64_t> to_stride(int64_t value) {
  if (value == -1) return std::nullopt;
  return value;  // another negative value: the engine's invalid_stride
}

vkgemm::GemmDesc to_desc(const vkgemm_gemm_desc& d) {
  vkgemm::GemmDesc desc;
  desc.type = to_type(d.type, "type");
  if (d.c_type != -1) desc.c_type = to_type(d.c_type, "c_type");
  if (d.column_major != 0 && d.column_major != 1) {
    refuse(fmt::format("vkgemm: column_major = {} is neither 0 (row-major) nor 1 (column-major)", d.column_major));
  }
  desc.layout = d.column_major ? vkgemm::Layout::col_major : vkgemm::Layout::row_major;
  desc.op_a = to_op(d.trans_a, "trans_a");
  desc.op_b = to_op(d.trans_b, "trans_b");
  desc.m = d.m, desc.n = d.n, desc.k = d.k;
  desc.lda = d.lda, desc.ldb = d.ldb, desc.ldc = d.ldc;
  desc.alpha = d.alpha, desc.beta = d.beta;
  desc.batch = d.batch;
  desc.stride_a = to_stride(d.stride_a), desc.stride_b = to_stride(d.stride_b), desc.stride_c = to_stride(d.stride_c);
  return desc;
}

// The numbers as the C++ enums' (the door names a value that is none of them).
vkgemm::Epilogue to_epilogue(const vkgemm_epilogue* e) {
  vkgemm::Epilogue out;
  if (!e) return out;
  check_struct(e, e->struct_size, sizeof(vkgemm_epilogue), "vkgemm_epilogue");
  const auto byte = [](int32_t v, const char* name) {
    if (v < 0 || v > 255) refuse(fmt::format("vkgemm: vkgemm_epilogue.{} = {} is out of range", name, v));
    return static_cast<uint8_t>(v);
  };
  out.bias = static_cast<vkgemm::BiasAxis>(byte(e->bias, "bias"));
  out.bias_type = to_type(e->bias_type, "bias_type");
  out.activation = static_cast<vkgemm::Activation>(byte(e->activation, "activation"));
  out.slope = e->slope;
  // A bound not given stays unset: the door refuses a clamp without both, naming the missing one.
  const auto given = [](int32_t v, const char* name) {
    if (v != 0 && v != 1) refuse(fmt::format("vkgemm: vkgemm_epilogue.{} = {} is neither 0 nor 1", name, v));
    return v == 1;
  };
  if (given(e->has_lo, "has_lo")) out.lo = e->lo;
  if (given(e->has_hi, "has_hi")) out.hi = e->hi;
  out.scale = static_cast<vkgemm::ScaleAxis>(byte(e->scale, "scale"));
  out.tensor_scale = e->tensor_scale;
  return out;
}

vkgemm::GemmOptions to_options(const vkgemm_gemm_options* o) {
  vkgemm::GemmOptions options;
  options.timestamps = false;
  if (!o) return options;
  check_struct(o, o->struct_size, sizeof(vkgemm_gemm_options), "vkgemm_gemm_options");
  if (o->kernel && *o->kernel) {
    const auto kernel = vkgemm::parse_kernel(o->kernel);
    if (!kernel) {
      std::string names = "auto";
      for (vkgemm::Kernel k : vkgemm::all_kernels()) names += fmt::format(", {}", vkgemm::to_string(k));
      refuse(fmt::format("vkgemm: kernel \"{}\" is none of {}", o->kernel, names));
    }
    options.kernel = *kernel;
  }
  if (o->tile) options.tile = o->tile;
  options.timestamps = o->timestamps != 0;
  if (o->precision && *o->precision) {
    const auto precision = vkgemm::parse_precision(o->precision);
    if (!precision) refuse(fmt::format("vkgemm: precision \"{}\" is none of native, emulated", o->precision));
    options.precision = *precision;
  }
  return options;
}

void fill_device(const vkgemm::DeviceInfo& d, vkgemm_device_info* to) {
  check_struct(to, to ? to->struct_size : 0, sizeof(vkgemm_device_info), "vkgemm_device_info");
  vkgemm_device_info& out = *to;
  const uint32_t size = out.struct_size;
  std::memset(&out, 0, sizeof(vkgemm_device_info));
  out.struct_size = size;
  out.index = d.index;
  copy_text(out.name, d.name);
  copy_text(out.vendor, d.vendor);
  copy_text(out.type, vkgemm::to_string(d.type));
  copy_text(out.driver, d.driver_info.empty() ? d.driver_name : d.driver_name + " " + d.driver_info);
  copy_text(out.api_version, d.api_version);
  out.device_local_memory = d.device_local_memory;
  out.max_allocation_size = d.max_allocation_size;
  out.float64 = d.float64, out.float16 = d.float16, out.storage16 = d.storage16, out.storage8 = d.storage8;
  out.bfloat16 = d.bfloat16_coopmat, out.coopmat = d.coopmat_khr, out.coopmat2 = d.coopmat2;
  out.timestamps = d.timestamps;
}

void fill_timing(const vkgemm::GemmTiming& t, vkgemm_timing& out) {
  out.gpu_timestamps = !t.gpu_ms.empty();
  out.gpu_ms = t.gpu_ms.empty() ? 0.0 : t.median_gpu_ms();
  out.upload_ms = t.upload_ms, out.download_ms = t.download_ms, out.submit_wait_ms = t.submit_wait_ms;
  copy_text(out.kernel, vkgemm::to_string(t.kernel));
  copy_text(out.config, t.config);
}

// The buffer, when it is a live buffer of `engine`; else refused, naming the argument and the fix.
vkgemm::Buffer& owned(vkgemm_engine* engine, const vkgemm_buffer* buffer, const char* call, const char* name) {
  if (!buffer) {
    refuse(fmt::format("{}: {} is null; pass a buffer vkgemm_buffer_create made on this engine", call, name));
  }
  {
    std::lock_guard guard(engine->lock);
    if (engine->buffers.count(buffer)) return const_cast<vkgemm_buffer*>(buffer)->buffer;
  }
  refuse(fmt::format("{}: {} is no live buffer of this engine (one made by another engine, or destroyed, or whose "
                     "engine was destroyed); create it with vkgemm_buffer_create on the engine of the call",
                     call, name));
}

// [offset, offset + bytes) inside a buffer of `size` bytes, the sum never wrapping past 2^64.
void check_range(const char* call, uint64_t offset, uint64_t bytes, uint64_t size) {
  if (offset > ~uint64_t{0} - bytes) {  // the end past 2^64 would wrap to a small number
    refuse(fmt::format("{}: offset {} + bytes {} overflows 64 bits; the range must lie inside the {}-byte buffer",
                       call, offset, bytes, size));
  }
  if (offset > size || bytes > size - offset) {
    refuse(fmt::format("{}: offset {} + bytes {} = {} passes the end of the {}-byte buffer; keep offset + bytes <= "
                       "{}", call, offset, bytes, offset + bytes, size, size));
  }
}

vkgemm::BufferOffset to_operand(vkgemm_engine* engine, const vkgemm_operand* op, const char* call, const char* name) {
  if (!op) refuse(fmt::format("{}: {} is null; pass a vkgemm_operand with its buffer and offset", call, name));
  if (op->struct_size < sizeof(vkgemm_operand)) {
    refuse(fmt::format("{}: {}.struct_size = {} is smaller than {}, the size this library reads (set it to "
                       "sizeof(vkgemm_operand))", call, name, op->struct_size, sizeof(vkgemm_operand)));
  }
  return {&owned(engine, op->buffer, call, fmt::format("{}.buffer", name).c_str()), op->offset};
}

// A product on buffers as vkgemm_gemm_buffers and vkgemm_gemm_buffers_submit take it, translated and checked.
struct BufferProduct {
  vkgemm::GemmDesc desc;
  vkgemm::BufferOffset ops[3];
  vkgemm::BufferOffset vectors;  // none: an empty operand, which the engine refuses where the epilogue reads one
  vkgemm::GemmOptions options;
};
BufferProduct buffer_product(vkgemm_engine* engine, const vkgemm_gemm_desc* desc, const vkgemm_epilogue* epilogue,
                             const vkgemm_operand* a, const vkgemm_operand* b, const vkgemm_operand* c,
                             const vkgemm_operand* vectors, const vkgemm_gemm_options* options, const char* call) {
  if (!engine) refuse(fmt::format("{}: engine is null; pass the engine that made the buffers", call));
  check_struct(desc, desc ? desc->struct_size : 0, sizeof(vkgemm_gemm_desc), "vkgemm_gemm_desc");
  BufferProduct p;
  p.desc = to_desc(*desc);
  p.desc.epilogue = to_epilogue(epilogue);
  p.ops[0] = to_operand(engine, a, call, "a"), p.ops[1] = to_operand(engine, b, call, "b");
  p.ops[2] = to_operand(engine, c, call, "c");
  if (vectors) p.vectors = to_operand(engine, vectors, call, "vectors");
  p.options = to_options(options);
  return p;
}

// Waits for what products and writes beside left in flight (feature 4), before a call that assumes none.
void settle(vkgemm_engine* engine) {
  if (!engine || !engine->in_flight.load()) return;
  vkgemm::wait_beside(engine->engine, 0, std::chrono::nanoseconds::max());
  engine->in_flight = false;
}

}  // namespace

extern "C" {

int32_t vkgemm_abi_version(void) { return VKGEMM_C_ABI_VERSION; }
int32_t vkgemm_abi_feature(void) { return VKGEMM_C_ABI_FEATURE; }
const char* vkgemm_version(void) { return VKGEMM_VERSION; }
const char* vkgemm_last_error(void) { return last_error.c_str(); }

const char* vkgemm_status_name(vkgemm_status status) {
  if (status == VKGEMM_OK) return "ok";
  if (status == VKGEMM_STATUS_INTERNAL) return "internal";
  const auto errors = vkgemm::enumeration_names("error");
  if (status < 1 || static_cast<size_t>(status) > errors.size()) return "unknown";
  return errors[static_cast<size_t>(status) - 1];
}

const char* vkgemm_enum_name(const char* enumeration, int32_t value) {
  const auto names = enumeration ? vkgemm::enumeration_names(enumeration) : vkgemm::enumerations();
  return value >= 0 && static_cast<size_t>(value) < names.size() ? names[static_cast<size_t>(value)] : nullptr;
}

size_t vkgemm_type_size(int32_t type) {
  if (type < 0 || static_cast<size_t>(type) >= std::size(vkgemm::all_data_types)) return 0;
  return vkgemm::element_size(static_cast<vkgemm::DataType>(type));
}

vkgemm_status vkgemm_devices(vkgemm_device_info* out, size_t capacity, size_t* count) {
  return guarded([&] {
    if (!count) refuse("vkgemm_devices: count is null");
    if (capacity > 0 && !out) refuse("vkgemm_devices: out is null but capacity is not 0");
    const std::vector<vkgemm::DeviceInfo> devices = vkgemm::Engine::devices();
    *count = devices.size();
    for (size_t i = 0; i < devices.size() && i < capacity; ++i) fill_device(devices[i], &out[i]);
  });
}

vkgemm_status vkgemm_engine_create(const char* device, vkgemm_engine** out) {
  vkgemm_engine_options options{};
  options.struct_size = sizeof options;
  options.device = device;
  return vkgemm_engine_create_with(&options, out);
}

vkgemm_status vkgemm_engine_create_with(const vkgemm_engine_options* options, vkgemm_engine** out) {
  if (out) *out = nullptr;
  return guarded([&] {
    if (!out) refuse("vkgemm_engine_create: out is null");
    check_struct(options, options ? options->struct_size : 0, sizeof(vkgemm_engine_options), "vkgemm_engine_options");
    vkgemm::EngineOptions o;
    if (options->device) o.device = options->device;
    o.validation = options->validation != 0;
    *out = new vkgemm_engine(vkgemm::Engine(o));
  });
}

uint64_t vkgemm_engine_validation_messages(const vkgemm_engine* engine) {
  return engine ? engine->engine.validation_message_count() : 0;
}

void vkgemm_engine_destroy(vkgemm_engine* engine) {
  if (!engine) return;
  {
    // The C++ Buffer must not outlive its Engine: the memory of the buffers still alive goes first.
    std::lock_guard guard(engine->lock);
    for (const vkgemm_buffer* b : engine->buffers) {
      auto* buffer = const_cast<vkgemm_buffer*>(b);
      buffer->buffer = vkgemm::Buffer{};
      buffer->engine = nullptr;
    }
    engine->buffers.clear();
  }
  delete engine;
}

vkgemm_status vkgemm_engine_device(const vkgemm_engine* engine, vkgemm_device_info* out) {
  return guarded([&] {
    if (!engine) refuse("vkgemm_engine_device: engine is null");
    fill_device(engine->engine.device(), out);
  });
}

const char* vkgemm_engine_device_reason(const vkgemm_engine* engine) {
  return engine ? engine->engine.device_reason().c_str() : "";
}

vkgemm_status vkgemm_gemm(vkgemm_engine* engine, const vkgemm_gemm_desc* desc, const void* a, const void* b, void* c,
                          const vkgemm_gemm_options* options, vkgemm_timing* timing) {
  return guarded([&] {
    if (!engine) refuse("vkgemm_gemm: engine is null");
    settle(engine);
    check_struct(desc, desc ? desc->struct_size : 0, sizeof(vkgemm_gemm_desc), "vkgemm_gemm_desc");
    const vkgemm::GemmDesc d = to_desc(*desc);
    const vkgemm::GemmOptions o = to_options(options);
    if (timing) check_struct(timing, timing->struct_size, sizeof(vkgemm_timing), "vkgemm_timing");
    const vkgemm::GemmTiming t = engine->engine.gemm(d, a, b, c, o);
    if (timing) fill_timing(t, *timing);
  });
}

vkgemm_status vkgemm_gemm_epilogue(vkgemm_engine* engine, const vkgemm_gemm_desc* desc, const vkgemm_epilogue* epilogue,
                                   const void* a, const void* b, void* c, const void* vectors,
                                   const vkgemm_gemm_options* options, vkgemm_timing* timing) {
  return guarded([&] {
    if (!engine) refuse("vkgemm_gemm_epilogue: engine is null");
    settle(engine);
    check_struct(desc, desc ? desc->struct_size : 0, sizeof(vkgemm_gemm_desc), "vkgemm_gemm_desc");
    vkgemm::GemmDesc d = to_desc(*desc);
    d.epilogue = to_epilogue(epilogue);
    const vkgemm::GemmOptions o = to_options(options);
    if (timing) check_struct(timing, timing->struct_size, sizeof(vkgemm_timing), "vkgemm_timing");
    const vkgemm::GemmTiming t = engine->engine.gemm(d, a, b, c, o, vectors);
    if (timing) fill_timing(t, *timing);
  });
}

vkgemm_status vkgemm_buffer_create(vkgemm_engine* engine, uint64_t bytes, vkgemm_buffer** out) {
  if (out) *out = nullptr;
  return guarded([&] {
    if (!engine) refuse("vkgemm_buffer_create: engine is null; pass the engine vkgemm_engine_create made");
    if (!out) refuse("vkgemm_buffer_create: out is null; pass the address of a vkgemm_buffer* to receive the buffer");
    if (bytes == 0) refuse("vkgemm_buffer_create: bytes = 0; a buffer holds at least 1 byte (round an empty size up)");
    settle(engine);
    const vkgemm::DeviceInfo& device = engine->engine.device();
    if (device.max_allocation_size && bytes > device.max_allocation_size) {
      throw vkgemm::Error(vkgemm::ErrorCode::too_large,
                          fmt::format("vkgemm_buffer_create: bytes = {} exceeds maxMemoryAllocationSize, {} bytes on "
                                      "{}; split the data over several buffers (a batch's entries apart)",
                                      bytes, device.max_allocation_size, device.name));
    }
    auto buffer = std::make_unique<vkgemm_buffer>();
    buffer->buffer = engine->engine.create_buffer(bytes, "vkgemm C ABI buffer");
    buffer->engine = engine;
    std::lock_guard guard(engine->lock);
    engine->buffers.insert(buffer.get());
    *out = buffer.release();
  });
}

void vkgemm_buffer_destroy(vkgemm_buffer* buffer) {
  if (!buffer) return;
  if (vkgemm_engine* engine = buffer->engine) {
    guarded([&] { settle(engine); });  // what is in flight may use it; a failure there is the device's, kept
    std::lock_guard guard(engine->lock);
    engine->buffers.erase(buffer);
    buffer->buffer = vkgemm::Buffer{};
  }
  delete buffer;
}

uint64_t vkgemm_buffer_size(const vkgemm_buffer* buffer) { return buffer ? buffer->buffer.size() : 0; }

vkgemm_status vkgemm_buffer_write(vkgemm_engine* engine, vkgemm_buffer* buffer, uint64_t offset, const void* data,
                                  uint64_t bytes) {
  return guarded([&] {
    if (!engine) refuse("vkgemm_buffer_write: engine is null; pass the engine that made the buffer");
    vkgemm::Buffer& b = owned(engine, buffer, "vkgemm_buffer_write", "buffer");
    check_range("vkgemm_buffer_write", offset, bytes, b.size());
    if (!data && bytes) refuse(fmt::format("vkgemm_buffer_write: data is null but bytes = {}; pass the host memory "
                                           "to copy from", bytes));
    settle(engine);
    engine->engine.write(b, offset, data, bytes);
  });
}

vkgemm_status vkgemm_buffer_read(vkgemm_engine* engine, const vkgemm_buffer* buffer, uint64_t offset, void* data,
                                 uint64_t bytes) {
  return guarded([&] {
    if (!engine) refuse("vkgemm_buffer_read: engine is null; pass the engine that made the buffer");
    const vkgemm::Buffer& b = owned(engine, buffer, "vkgemm_buffer_read", "buffer");
    check_range("vkgemm_buffer_read", offset, bytes, b.size());
    if (!data && bytes) refuse(fmt::format("vkgemm_buffer_read: data is null but bytes = {}; pass the host memory "
                                           "to copy into", bytes));
    settle(engine);
    engine->engine.read(b, offset, data, bytes);
  });
}

vkgemm_status vkgemm_gemm_buffers(vkgemm_engine* engine, const vkgemm_gemm_desc* desc, const vkgemm_epilogue* epilogue,
                                  const vkgemm_operand* a, const vkgemm_operand* b, const vkgemm_operand* c,
                                  const vkgemm_operand* vectors, const vkgemm_gemm_options* options,
                                  vkgemm_timing* timing) {
  return guarded([&] {
    const BufferProduct p = buffer_product(engine, desc, epilogue, a, b, c, vectors, options, "vkgemm_gemm_buffers");
    if (timing) check_struct(timing, timing->struct_size, sizeof(vkgemm_timing), "vkgemm_timing");
    settle(engine);
    const vkgemm::GemmTiming t = engine->engine.gemm(p.desc, p.ops[0], p.ops[1], p.ops[2], p.options, p.vectors);
    if (timing) fill_timing(t, *timing);
  });
}

vkgemm_status vkgemm_gemm_buffers_submit(vkgemm_engine* engine, const vkgemm_gemm_desc* desc,
                                         const vkgemm_epilogue* epilogue, const vkgemm_operand* a,
                                         const vkgemm_operand* b, const vkgemm_operand* c,
                                         const vkgemm_operand* vectors, const vkgemm_gemm_options* options,
                                         uint64_t* ticket) {
  if (ticket) *ticket = 0;
  return guarded([&] {
    const char* call = "vkgemm_gemm_buffers_submit";
    const BufferProduct p = buffer_product(engine, desc, epilogue, a, b, c, vectors, options, call);
    if (!ticket) refuse(fmt::format("{}: ticket is null; pass the address of a uint64_t to receive the product's "
                                    "ticket (for vkgemm_engine_wait)", call));
    engine->in_flight = true;
    *ticket = vkgemm::submit_beside(engine->engine, p.desc, p.ops[0], p.ops[1], p.ops[2], p.options, p.vectors).value();
  });
}

vkgemm_status vkgemm_buffer_write_beside(vkgemm_engine* engine, vkgemm_buffer* buffer, uint64_t offset,
                                         const void* data, uint64_t bytes) {
  return guarded([&] {
    const char* call = "vkgemm_buffer_write_beside";
    if (!engine) refuse(fmt::format("{}: engine is null; pass the engine that made the buffer", call));
    vkgemm::Buffer& b = owned(engine, buffer, call, "buffer");
    check_range(call, offset, bytes, b.size());
    if (!data && bytes) {
      refuse(fmt::format("{}: data is null but bytes = {}; pass the host memory to copy from", call, bytes));
    }
    engine->in_flight = true;
    vkgemm::write_beside(engine->engine, b, offset, data, bytes);
  });
}

vkgemm_status vkgemm_engine_wait(vkgemm_engine* engine, uint64_t ticket, uint64_t timeout_ns, int32_t* complete) {
  if (complete) *complete = 0;
  return guarded([&] {
    if (!engine) refuse("vkgemm_engine_wait: engine is null; pass the engine that submitted the product");
    if (!complete) {
      refuse("vkgemm_engine_wait: complete is null; pass the address of an int32_t to receive 1 (complete) or 0");
    }
    // Past the largest duration the clock holds: as long as it holds (hundreds of years).
    const auto most = static_cast<uint64_t>(std::chrono::nanoseconds::max().count());
    const std::chrono::nanoseconds timeout{static_cast<int64_t>(std::min(timeout_ns, most))};
    const bool done = vkgemm::wait_beside(engine->engine, ticket, timeout);
    if (done && ticket == 0) engine->in_flight = false;
    *complete = done ? 1 : 0;
  });
}

vkgemm_status vkgemm_check(const vkgemm_gemm_desc* desc, const void* a, const void* b, const void* c_in,
                           const void* c_out, uint64_t seed, vkgemm_check_result* result) {
  return guarded([&] {
    check_struct(desc, desc ? desc->struct_size : 0, sizeof(vkgemm_gemm_desc), "vkgemm_gemm_desc");
    check_struct(result, result ? result->struct_size : 0, sizeof(vkgemm_check_result), "vkgemm_check_result");
    const vkgemm::GemmDesc d = to_desc(*desc);
    vkgemm::check_gemm(d);
    for (const auto& [p, name] : {std::pair{a, 'A'}, std::pair{b, 'B'}, std::pair{c_in, 'C'}, std::pair{c_out, 'C'}}) {
      if (!p && vkgemm::operand_extent(d, name).elements > 0) {
        refuse(fmt::format("vkgemm_check: the pointer of {} (c_in and c_out for C) is null, but it has elements",
                           name));
      }
    }
    vkgemm::SampleOptions sample;
    sample.seed = seed;
    const vkgemm::Comparison r = vkgemm::check_sampled(d, a, b, c_in, c_out, {}, sample);
    result->passed = r.passed ? 1 : 0;
    result->worst_element_ratio = r.worst_element_ratio;
    result->row_sum_ratio = r.sampled ? r.sampled->row_sum_ratio : 0.0;
    result->bad_elements = r.bad_elements, result->first_bad = r.first_bad;
    result->bad_rows = r.sampled ? r.sampled->bad_rows : 0;
    copy_text(result->summary, r.summary());
  });
}

}  // extern "C"
