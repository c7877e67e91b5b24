// Copies beside the products (host_panels.hpp, docs/design/host-copies.md "Panels"): a host-memory product
// cut along C's contiguous lines, the split operand and C imported once, each panel's upload on one copy
// queue, its product on the compute queue and its download on the other copy queue, ordered by the host.
#include "engine/host_panels.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "engine/epilogue_check.hpp"
#include "plan/schedule.hpp"

namespace vkgemm::detail {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Whether the epilogue's vector operand runs along the cut (a bias per row for 'M', per column or the
// per-column scales for 'N'): a panel would need its own slice of it.
bool vector_along(const GemmDesc& desc, char axis) {
  if (axis == 'M') return desc.epilogue.bias == BiasAxis::per_row;
  return desc.epilogue.bias == BiasAxis::per_column || desc.epilogue.scale == ScaleAxis::per_column;
}

}  // namespace

PanelCut panel_cut(const GemmDesc& desc, const GemmOptions& options, bool k_chunked, bool bus, uint64_t forced) {
  const char axis = desc.layout == Layout::row_major ? 'M' : 'N';
  if (forced == HostCopyKnobs::kNoPanels || desc.batch != 1 || options.warmup + options.repeat != 1 || k_chunked || !reads_ab(desc) ||
      vector_along(desc, axis) || (!forced && !bus)) {
    return {};
  }
  const uint64_t lines = uint64_t(axis == 'M' ? desc.m : desc.n), other = uint64_t(axis == 'M' ? desc.n : desc.m);
  uint64_t panel = forced;
  if (!forced) {
    panel = std::max(ceil_div(lines, kMaxPanels), ceil_div(kPanelMinOutputs, other));
    panel = ceil_div(panel, kPanelAlign) * kPanelAlign;
  }
  const uint64_t count = ceil_div(lines, panel);
  if (count < 2) return {};
  return {axis, panel, count};
}

LineView line_view(const GemmDesc& desc, char which, char axis) {
  const bool row_major = desc.layout == Layout::row_major;
  const uint64_t ld = uint64_t(operand_extent(desc, which).ld);
  bool contiguous = false;
  uint64_t inner = uint64_t(desc.k);
  if (which == 'A') {
    contiguous = row_major != (desc.op_a == Op::t);  // op(A)(r, k) at r * lda + k
  } else if (which == 'B') {
    contiguous = row_major == (desc.op_b == Op::t);  // op(B)(k, r) at r * ldb + k
  } else {
    contiguous = row_major == (axis == 'M');
    inner = uint64_t(axis == 'M' ? desc.n : desc.m);
  }
  return contiguous ? LineView{ld, 1, inner} : LineView{1, ld, inner};
}

std::vector<VkBufferCopy> line_copies(const LineView& v, uint64_t r0, uint64_t r1, uint64_t element_size,
                                      uint64_t shift, bool to_host) {
  std::vector<VkBufferCopy> out;
  const auto add = [&](uint64_t first, uint64_t elements) {
    const uint64_t at = first * element_size, bytes = elements * element_size;
    out.push_back(to_host ? VkBufferCopy{at, shift + at, bytes} : VkBufferCopy{shift + at, at, bytes});
  };
  if (v.inner_step == 1) {
    add(r0 * v.line_step, (r1 - 1 - r0) * v.line_step + v.inner);  // the gaps between the lines too
  } else {
    out.reserve(v.inner);
    for (uint64_t i = 0; i < v.inner; ++i) add(i * v.inner_step + r0, r1 - r0);
  }
  return out;
}

namespace {

// Waits, when it goes before the last download was waited for, for everything the panels still have in
// flight on the three queues: a call that throws half-way releases its imported pages only once nothing reads
// or writes them. A call that completed waited for all of it, and a failure of these waits would be lost here.
struct InFlight {
  explicit InFlight(EngineImpl& e) : engine(e) {}
  ~InFlight() {
    if (completed) return;
    for (vk::Submitter* s : {engine.copy_up.get(), engine.copy_down.get(), engine.submitter.get()}) {
      try {
        s->wait_all();
      } catch (...) {  // a lost device: nothing runs any more
      }
    }
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  EngineImpl& engine;
  bool completed = false;
};

// One submission of copies on `s`; to the host: what it wrote is visible to the host.
uint64_t submit_copies(vk::Submitter& s, const VolkDeviceTable& t, VkBuffer src, VkBuffer dst,
                       const std::vector<VkBufferCopy>& regions, bool to_host) {
  return s.submit([&](VkCommandBuffer cmd) {
    t.vkCmdCopyBuffer(cmd, src, dst, static_cast<uint32_t>(regions.size()), regions.data());
    if (to_host) {
      vk::memory_barrier(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    }
  });
}

}  // namespace

std::optional<GemmTiming> EngineImpl::gemm_host_panels(const GemmDesc& desc, const HostOperands& host,
                                                       const uint64_t (&bytes)[kOperands], const GemmOptions& options,
                                                       const VulkanBufferRange (&ranges)[kOperands],
                                                       const OperandIds& ids) {
  const bool bus = !memory->storage_is_mapped() && host_copies->can_import();
  const PanelCut cut = panel_cut(desc, options, chunked(desc, options), bus, host_copies->knobs().panel_lines);
  if (!cut.count) return std::nullopt;
  const int split = cut.axis == 'M' ? 0 : 1;  // the operand cut with C: A for 'M', B for 'N'
  const bool c_in = c_goes_in(desc);
  // Both imports or neither: the caller's serial path copies whatever was not imported.
  auto split_pages = host_copies->import(split ? host.b : host.a, bytes[split], 0);
  if (!split_pages) return std::nullopt;
  auto c_pages = host_copies->import(host.c, bytes[2], 0);
  if (!c_pages) return std::nullopt;
  host_copies->count_panels(c_in ? 3 : 2);
  const auto spin = vk::wait_spin(WaitMode::automatic, default_wait, physical.info.type);
  for (uint32_t i : {0u, 1u}) {
    auto& s = i ? copy_down : copy_up;
    if (!s) s = std::make_unique<vk::Submitter>(*device, device->copy_queue(i), device->copy_family(), device->timeline(), spin);
  }
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  write(split ? host_a : host_b, 0, split ? host.a : host.b, bytes[1 - split]);  // the operand every panel reads
  write_bias(desc, host.bias);
  return run_panels(cut, desc, options, ranges, ids, PanelPages{&*split_pages, &*c_pages, c_in}, start);
}

GemmTiming EngineImpl::run_panels(const PanelCut& cut, const GemmDesc& desc, const GemmOptions& options,
                                  const VulkanBufferRange (&ranges)[kOperands], const OperandIds& ids,
                                  const PanelPages& pages, std::chrono::steady_clock::time_point start) {
  using clock = std::chrono::steady_clock;
  const auto& t = device->table();
  const int split = cut.axis == 'M' ? 0 : 1;
  const char split_name = split ? 'B' : 'A';
  const kernels::Types types = kernels::types_of(desc, options);
  const uint64_t es = element_size(types.input), cs = element_size(types.output);
  const LineView sv = line_view(desc, split_name, cut.axis), cv = line_view(desc, 'C', cut.axis);
  const uint64_t lines = uint64_t(cut.axis == 'M' ? desc.m : desc.n);
  const VkBuffer split_dev = ranges[split].buffer, c_dev = ranges[2].buffer;
  const VkBuffer split_host = pages.split->buffer.buffer.get(), c_host = pages.c->buffer.buffer.get();
  GemmDesc sub = desc;  // a panel's shape differs from the call's: its lds are the call's, given explicitly
  sub.lda = operand_extent(desc, 'A').ld, sub.ldb = operand_extent(desc, 'B').ld, sub.ldc = operand_extent(desc, 'C').ld;
  const auto r0 = [&](uint64_t i) { return i * cut.lines; };
  const auto r1 = [&](uint64_t i) { return std::min(lines, (i + 1) * cut.lines); };
  const auto upload = [&](uint64_t i) {
    uint64_t serial = submit_copies(*copy_up, t, split_host, split_dev,
                                    line_copies(sv, r0(i), r1(i), es, pages.split->shift, false), false);
    if (pages.c_in) {
      serial = submit_copies(*copy_up, t, c_host, c_dev, line_copies(cv, r0(i), r1(i), cs, pages.c->shift, false), false);
    }
    return serial;
  };
  // Panels [first, last]'s lines of C to the host: the ranges their uploads sent (the gaps after each panel's
  // last line are not C's, for a panel).
  const auto download = [&](uint64_t first, uint64_t last) {
    std::vector<VkBufferCopy> regions;
    for (uint64_t i = first; i <= last; ++i) {
      const auto more = line_copies(cv, r0(i), r1(i), cs, pages.c->shift, true);
      regions.insert(regions.end(), more.begin(), more.end());
    }
    return submit_copies(*copy_down, t, c_dev, c_host, regions, true);
  };
  struct Running {
    std::shared_ptr<GemmPlanState> plan;
    uint64_t serial = 0;
    clock::time_point submitted;
  };
  GemmTiming total;
  double gpu_ms = 0.0;
  const auto finish = [&](uint64_t i, Running& run) {
    const GemmTiming done = await_plan(*run.plan, run.serial, run.submitted);
    for (double ms : done.gpu_ms) gpu_ms += ms;
    total.submit_wait_ms += done.submit_wait_ms;
    total.gpu_timestamps = done.gpu_timestamps;
    if (i == 0) total.kernel = done.kernel, total.config = done.config;
    if (i > 0 && done.kernel != total.kernel) {
      total.config += fmt::format("; panel {}: {} {}", i, to_string(done.kernel), done.config);
    }
  };
  InFlight in_flight(*this);
  Running run;
  uint64_t next_upload = upload(0), downloaded = 0;
  double upload_ms = 0.0;
  for (uint64_t i = 0; i < cut.count; ++i) {
    const uint64_t this_upload = next_upload;
    if (i + 1 < cut.count) next_upload = upload(i + 1);  // on the copy queue while panel i computes
    copy_up->wait(this_upload);
    // The panel before is collected first: its plan (shared by panels of one shape) is submitted again next.
    // Where C goes in, its values are the caller's input: it comes back only once every product completed, so
    // a call that fails leaves it untouched (the BLAS library's fallback then computes from it).
    if (i > 0) {
      finish(i - 1, run);
      if (!pages.c_in) downloaded = download(i - 1, i - 1);
    }
    (cut.axis == 'M' ? sub.m : sub.n) = static_cast<int64_t>(r1(i) - r0(i));
    VulkanBufferRange moved[kOperands] = {ranges[0], ranges[1], ranges[2], ranges[3]};
    for (const auto& [op, step, size] : {std::tuple{split, sv.line_step, es}, std::tuple{2, cv.line_step, cs}}) {
      const uint64_t delta = r0(i) * step * size;  // inside the range: the call's extent covers it
      moved[op].offset += delta, moved[op].size -= delta;
    }
    run.plan = cached_plan(sub, options, moved, false);
    if (i == 0) upload_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
    run.submitted = clock::now();
    run.serial = submit_plan_async(*run.plan, moved, nullptr, &ids);
  }
  finish(cut.count - 1, run);
  const auto computed = clock::now();
  try {
    downloaded = download(pages.c_in ? 0 : cut.count - 1, cut.count - 1);
    copy_down->wait(downloaded);  // and so every download before it on its queue
  } catch (const Error& e) {
    throw HostCopies::partial_destination(e);
  }
  in_flight.completed = true;
  if (total.gpu_timestamps) total.gpu_ms.push_back(gpu_ms);
  total.upload_ms = upload_ms;
  total.download_ms = std::chrono::duration<double, std::milli>(clock::now() - computed).count();
  total.config += fmt::format(", {} panels of {} {} with their copies beside them", cut.count, cut.lines,
                              cut.axis == 'M' ? "rows" : "columns");
  return total;
}

}  // namespace vkgemm::detail
