// The submit-and-wait conveniences on top of EngineImpl::record(): on engine buffers (the plain
// MatrixRef product and the full BLAS call), on host memory, and submit_gemm() with the caller's sync.
#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "engine/epilogue_check.hpp"
#include "kernels/registry.hpp"
#include "ozaki_abi.h"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {

double GemmTiming::median_gpu_ms() const {
  if (gpu_ms.empty()) {
    throw Error(ErrorCode::invalid_argument,
                gpu_timestamps ? "no GPU times: timestamps were off (GemmOptions::timestamps, GemmPlanOptions::"
                                 "timestamps) or no timed dispatch ran"
                               : "this device's compute queue has no timestamps");
  }
  std::vector<double> sorted = gpu_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  return sorted.size() % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
}

namespace detail {

GemmTiming EngineImpl::submit(const GemmDesc& desc, const VulkanBufferRange (&ops)[kOperands], const GemmOptions& options,
                              const SubmitSync* sync) {
  const CallKey key = plan_key(Door::buffers, desc, options, ops);
  const PlanCache::Found found = find_plan(key);
  if (!found.admitted) admit(desc, options);
  check_buffers(desc, ops, kernels::types_of(desc, options));
  return submit_plan(*keep_plan(key, found, desc, options, ops, true), ops, sync);
}

void EngineImpl::record_call(GemmPlanState& plan, VkCommandBuffer cmd, const VulkanBufferRange (&ops)[kOperands],
                             const VkDescriptorSet* sets, VkQueryPool queries, QueryReset reset) {
  const auto& t = device->table();
  // What record() asks of its caller: uploads, host writes and earlier products are done first...
  memory_barrier(t, cmd,
                 VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                 VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_HOST_WRITE_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  if (!plan.product.pieces.empty()) plan.record(cmd, ops, sets, queries, reset);
  // ...and the result is ready for copies, the host and later kernels.
  memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                 VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
}

uint64_t EngineImpl::submit_plan_async(GemmPlanState& plan, const VulkanBufferRange (&ops)[kOperands], const SubmitSync* sync,
                                       const OperandIds* ids) {
  const bool work = !plan.product.pieces.empty();
  if (plan.engine_only && work) return submit_replayed(plan, ops, sync, ids);
  const bool ring = work && !plan.push;  // pushed descriptors wait for nothing
  const uint32_t slot = ring ? plan.take_slot() : 0;
  // The slot's sets may still be in use by an earlier submission of this plan.
  if (ring && plan.slot_serial[slot]) submitter->wait(plan.slot_serial[slot]);
  // A GemmPlan's queries are reset by a command: the application may have recordings of it pending.
  const VkQueryPool queries = work ? plan.queries.get() : VK_NULL_HANDLE;
  const uint64_t serial = submitter->submit(
      [&](VkCommandBuffer cmd) {
        record_call(plan, cmd, ops, ring ? plan.slot_sets(slot) : nullptr, queries, QueryReset::in_commands);
      },
      sync);
  if (ring) plan.slot_serial[slot] = serial;
  return serial;
}

GemmTiming EngineImpl::submit_plan(GemmPlanState& plan, const VulkanBufferRange (&ops)[kOperands], const SubmitSync* sync,
                                   const OperandIds* ids) {
  // From before vkQueueSubmit: a driver may run the work inside the submission (lavapipe under GPU-assisted
  // validation did), and the window must hold every dispatch's time.
  using clock = std::chrono::steady_clock;
  const auto submitted = clock::now();
  return await_plan(plan, submit_plan_async(plan, ops, sync, ids), submitted);
}

GemmTiming EngineImpl::await_plan(GemmPlanState& plan, uint64_t serial, std::chrono::steady_clock::time_point submitted) {
  using clock = std::chrono::steady_clock;
  submitter->wait(serial, vk::wait_spin(plan.options.gemm.wait, default_wait, physical.info.type,
                                        plan.last_completion));
  const clock::duration waited = clock::now() - submitted;
  plan.last_completion = std::chrono::duration_cast<std::chrono::microseconds>(waited);
  GemmTiming timing = plan.timing(plan.queries.get());
  timing.submit_wait_ms = std::chrono::duration<double, std::milli>(waited).count();
  if (plan.product.kernel == Kernel::ozaki && !plan.product.sequence.empty()) report_emulation(plan, timing);
  return timing;
}

void EngineImpl::report_emulation(const GemmPlanState& plan, GemmTiming& timing) {
  // The coverage flag and the span guard's refusals the passes left (ozaki_abi.h): the native kernel computed
  // the product where the flag is set or every candidate count was refused.
  int32_t words[OZAKI_CONTROL_WORDS] = {};
  read(plan.workspace, 0, words, sizeof words);
  int32_t flag = words[OZAKI_FLAG_WORD];
  const std::vector<uint32_t>& candidates = plan.product.candidate_moduli;
  size_t choice = 0;
  while (choice < candidates.size() && words[OZAKI_REFUSED_WORD + choice] != 0) ++choice;
  // Which of the span guard's passes judged the call: the lines' extremes where they admitted the first count
  // (said by nothing), else each pair of lines' levels, else the magnitude product.
  const char* judged = words[OZAKI_LEVELS_WORD] != 0    ? "; the span guard judged it by its magnitude product"
                       : words[OZAKI_EXTREMES_WORD] != 0 ? "; the span guard judged it by each pair of lines' levels"
                                                         : "";
  if (flag == 0 && choice == 0) {
    timing.config = plan.product.config + judged;
    return;
  }
  if (flag == 0 && choice < candidates.size()) {
    timing.config = fmt::format("{} moduli (the span guard's choice over {}), {}{}", candidates[choice],
                                candidates[0], plan.product.config, judged);
    return;
  }
  if (flag == 0) flag = OZAKI_UNCOVERED_SPAN;
  std::string why;
  if (flag & OZAKI_UNCOVERED_NONFINITE) why += ", an input is NaN or infinite";
  if (flag & OZAKI_UNCOVERED_SUBNORMAL) why += ", an input is a subnormal the scaling would keep";
  if (flag & OZAKI_UNCOVERED_SPAN) why += ", the span guard: a line's exponents spread past what the moduli cover";
  timing.kernel = plan.product.fallback_kernel;
  timing.config = fmt::format("{} (the ozaki kernel fell back to it: {})", plan.product.fallback_config,
                              why.empty() ? std::string("coverage flag set") : why.substr(2));
}

GemmTiming EngineImpl::submit_k_chunks(const GemmDesc& desc, const VulkanBufferRange (&ops)[kOperands],
                                       const GemmOptions& options, const OperandIds* ids) {
  // The door checked all of the call before the first chunk runs (a later chunk's refusal would leave C
  // half done); the chunks' plans are built unchecked.
  const uint64_t es = element_size(desc.type);
  const OperandExtent ea = operand_extent(desc, 'A'), eb = operand_extent(desc, 'B'), ec = operand_extent(desc, 'C');
  // Where element k of op(A)'s row and of op(B)'s column lie in storage: next to each other, or a leading
  // dimension apart, by layout and op (row-major A: 1; row-major A^T: lda; column-major the other way).
  const bool row_major = desc.layout == Layout::row_major;
  const uint64_t step_a = (row_major != (desc.op_a == Op::t)) ? 1 : uint64_t(ea.ld);
  const uint64_t step_b = (row_major != (desc.op_b == Op::t)) ? uint64_t(eb.ld) : 1;
  GemmDesc chunk = desc;
  // A chunk's shape differs from the call's: its lds and strides are the call's, given explicitly.
  chunk.lda = ea.ld, chunk.ldb = eb.ld, chunk.ldc = ec.ld;
  chunk.stride_a = ea.stride, chunk.stride_b = eb.stride, chunk.stride_c = ec.stride;
  GemmOptions once = options;
  once.repeat = 1, once.warmup = 0;
  const uint64_t bound = options.max_k_per_submission;
  GemmTiming total;
  uint64_t chunks = 0;
  // Every product (warmup or timed) is all the chunks in order, the first applying beta; a timed product's
  // GPU time is the sum of its chunks'.
  for (uint32_t r = 0; r < options.warmup + options.repeat; ++r) {
    double gpu_ms = 0.0;
    chunks = 0;
    for (uint64_t k0 = 0; k0 < uint64_t(desc.k); k0 += bound, ++chunks) {
      chunk.k = static_cast<int64_t>(std::min<uint64_t>(bound, uint64_t(desc.k) - k0));
      chunk.beta = k0 == 0 ? desc.beta : 1.0;
      // The epilogue once, on the finished sums: the earlier chunks leave theirs raw in C for the last.
      // A dequantization scale is linear in the sums: every chunk applies it.
      chunk.epilogue = k0 + bound >= uint64_t(desc.k)
                           ? desc.epilogue
                           : Epilogue{.scale = desc.epilogue.scale, .tensor_scale = desc.epilogue.tensor_scale};
      VulkanBufferRange moved[kOperands] = {ops[0], ops[1], ops[2], ops[3]};
      for (const auto& [i, step] : {std::pair{0, step_a}, std::pair{1, step_b}}) {
        const uint64_t delta = k0 * step * es;  // inside the range: the call's extent covers it
        moved[i].offset += delta, moved[i].size -= delta;
      }
      const GemmTiming t = submit_plan(*cached_plan(chunk, once, moved, false), moved, nullptr, ids);
      total.submit_wait_ms += t.submit_wait_ms;
      for (double ms : t.gpu_ms) gpu_ms += ms;
      total.gpu_timestamps = t.gpu_timestamps, total.kernel = t.kernel;
      if (k0 == 0) total.config = t.config;
    }
    if (r >= options.warmup && total.gpu_timestamps) total.gpu_ms.push_back(gpu_ms);
  }
  total.config += fmt::format(", {} submissions of K <= {}", chunks, bound);
  return total;
}

namespace {

// The whole of an engine buffer from `offset`, as record() takes operands.
VulkanBufferRange range_of(const BufferImpl& b, uint64_t offset) {
  return {b.alloc.buffer.get(), offset, offset > b.alloc.size ? 0 : b.alloc.size - offset};
}

}  // namespace

EngineImpl::BufferCall EngineImpl::admit_buffers(const GemmDesc& desc, const BufferOffset (&ops)[kOperands],
                                                 const GemmOptions& options, const char* what) {
  BufferCall call;
  ranges_of(ops, call.ranges, what, &call.ids);
  // The door in two steps: argument errors before an empty product's early return, as the reference BLAS;
  // the options, the device's support and the buffers only for a product that runs. A call with the key of
  // one that passed (the door's memo, plan_cache.hpp; never an empty or a chunked one: neither is cached
  // under its own key) has its buffers checked alone.
  const CallKey key = plan_key(Door::buffers, desc, options, call.ranges);
  const PlanCache::Found found = find_plan(key);
  if (!found.admitted) {
    check_gemm(desc);
    if (desc.m == 0 || desc.n == 0 || desc.batch == 0) return call;
    admit_options(desc, options);
  }
  check_buffers(desc, call.ranges, kernels::types_of(desc, options));
  call.chunked = chunked(desc, options);
  if (!call.chunked) call.plan = keep_plan(key, found, desc, options, call.ranges, true);
  return call;
}

GemmTiming EngineImpl::gemm(const GemmDesc& desc, const BufferOffset (&ops)[kOperands], const GemmOptions& options) {
  BufferCall call = admit_buffers(desc, ops, options, "gemm");
  if (call.chunked) return submit_k_chunks(desc, call.ranges, options, &call.ids);
  if (call.plan) return submit_plan(*call.plan, call.ranges, nullptr, &call.ids);
  GemmTiming timing;  // an empty product
  timing.gpu_timestamps = physical.info.timestamps;
  return timing;
}

bool EngineImpl::chunked(const GemmDesc& desc, const GemmOptions& options) {
  // A watchdog bound cuts a long K into submissions of their own (engine.hpp, max_k_per_submission).
  return reads_ab(desc) && options.max_k_per_submission && uint64_t(desc.k) > options.max_k_per_submission;
}

GemmTiming EngineImpl::gemm(const MatrixRef& a, const MatrixRef& b, const MatrixRef& c, const GemmOptions& options) {
  // A and B share one type; C has one output_allowed says (the input type, f32 for f16 and bf16, i32 for i8, u8).
  if (a.type != b.type || !output_allowed(a.type, c.type)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: A and B must share one type and C have one it gives (f32 or f16 for f16, f32 or "
                            "bf16 for bf16, i32 for i8 and u8, else the same); they are {}, {}, {}",
                            to_string(a.type), to_string(b.type), to_string(c.type)));
  }
  if (a.cols != b.rows || a.rows != c.rows || b.cols != c.cols) {
    throw Error(ErrorCode::dimension_mismatch,
                fmt::format("gemm: A is {}x{}, B is {}x{}, C is {}x{}; need A m x k, B k x n, C m x n", a.rows, a.cols,
                            b.rows, b.cols, c.rows, c.cols));
  }
  GemmDesc desc;
  desc.type = a.type;
  desc.c_type = c.type;
  desc.m = c.rows, desc.n = c.cols, desc.k = a.cols;
  return gemm(desc, {BufferOffset{a.buffer, a.offset}, BufferOffset{b.buffer, b.offset}, BufferOffset{c.buffer, c.offset}},
              options);
}

bool EngineImpl::c_goes_in(const GemmDesc& desc) {
  // With beta = 0 over a span without gaps the kernels write every byte the download brings back, and C's
  // upload would only cost the bus its bytes.
  const uint64_t c_elements = uint64_t(desc.m) * uint64_t(desc.n) * uint64_t(desc.batch);
  return desc.beta != 0.0 || operand_extent(desc, 'C').elements != c_elements;
}

void EngineImpl::write_bias(const GemmDesc& desc, const void* bias) {
  if (!has_vector_operand(desc)) return;
  write(host_bias, 0, bias, bias_byte_offset(desc) + uint64_t(bias_length(desc)) * element_size(desc.epilogue.bias_type));
}

GemmTiming EngineImpl::gemm_host(const GemmDesc& desc, const void* a, const void* b, void* c, const void* bias,
                                 const GemmOptions& options) {
  // The door, before anything is copied; the host buffers are the engine's, sized below, at offset 0. A call
  // with the key of one that passed (plan_cache.hpp) passed these checks, which read nothing else.
  const VulkanBufferRange at_zero[kOperands] = {};
  const CallKey key = plan_key(Door::host, desc, options, at_zero);
  const PlanCache::Found found = find_plan(key);
  if (!found.admitted) {
    admit(desc, options);
    try {
      check_fits(desc, options, physical.info, nullptr);  // the operands against the device, before allocating
    } catch (const Error& e) {
      // Past what the device allocates at once: blocks of C that fit, where the product can be cut so.
      if (e.code() != ErrorCode::too_large) throw;
      if (auto blocks = gemm_host_blocks(desc, {a, b, c, bias}, options)) return *blocks;
      throw;
    }
  }
  const kernels::Types types = kernels::types_of(desc, options);
  const uint64_t es = element_size(types.input);
  const uint64_t bytes[kOperands] = {operand_extent(desc, 'A').elements * es, operand_extent(desc, 'B').elements * es,
                                     operand_extent(desc, 'C').elements * element_size(types.output),
                                     operand_bytes(desc, types, 3)};
  GemmTiming timing;
  timing.gpu_timestamps = physical.info.timestamps;
  if (bytes[2] == 0 || desc.batch == 0) return timing;  // m or n is 0: nothing to do
  if (!c || (reads_ab(desc) && (!a || !b))) {
    throw Error(ErrorCode::invalid_argument, "gemm: a host pointer for A, B or C is null");
  }
  const bool has_bias = has_vector_operand(desc);  // a bias, or per_column scales (then the bias)
  if (has_bias && !bias) {
    throw Error(ErrorCode::invalid_argument,
                desc.epilogue.bias != BiasAxis::none
                    ? "gemm: the epilogue has a bias but its host pointer is null"
                    : "gemm: the epilogue has per_column scales but their host pointer (bias) is null");
  }
  Buffer* buffers[kOperands] = {&host_a, &host_b, &host_c, &host_bias};
  const char* names[kOperands] = {"vkgemm host A", "vkgemm host B", "vkgemm host C", "vkgemm host bias"};
  VulkanBufferRange ranges[kOperands] = {};
  OperandIds ids{};
  for (int i = 0; i < (has_bias ? kOperands : 3); ++i) {
    const uint64_t n = std::max<uint64_t>(bytes[i], 16);  // an operand not read still gets a (tiny) buffer to bind
    if (buffers[i]->size() < n) {
      *buffers[i] = Buffer();  // free the old one first: the new one may need its memory
      *buffers[i] = create_buffer(n, names[i]);
    }
    ranges[i] = range_of(*Access::impl(*buffers[i]), 0);
    ids[size_t(i)] = Access::impl(*buffers[i])->id;
  }

  if (auto panels = gemm_host_panels(desc, {a, b, c, bias}, bytes, options, ranges, ids)) return *panels;
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  if (reads_ab(desc)) {
    write(host_a, 0, a, bytes[0]);
    write(host_b, 0, b, bytes[1]);
  }
  if (c_goes_in(desc)) write(host_c, 0, c, bytes[2]);
  write_bias(desc, bias);
  const double upload = std::chrono::duration<double, std::milli>(clock::now() - start).count();
  timing = chunked(desc, options)
               ? submit_k_chunks(desc, ranges, options, &ids)
               : submit_plan(*keep_plan(key, found, desc, options, ranges, true), ranges, nullptr, &ids);
  start = clock::now();
  read(host_c, 0, c, bytes[2]);
  timing.download_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
  timing.upload_ms = upload;
  return timing;
}

}  // namespace detail
}  // namespace vkgemm
