// Copies beside the products (host_panels.hpp, docs/design/host-copies.md "Panels"): a host-memory product
// cut along C's contiguous lines, the split operand and C imported once (or staged a panel at a time by the
// host's copy threads), each panel's upload on one copy queue, its product on the compute queue and its
// download on the other copy queue, ordered by the host.
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

GemmDesc with_explicit_lds(const GemmDesc& desc) {
  GemmDesc out = desc;
  out.lda = operand_extent(desc, 'A').ld, out.ldb = operand_extent(desc, 'B').ld;
  out.ldc = operand_extent(desc, 'C').ld;
  return out;
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

// Waits, when it goes before the call completed, for everything the panels still have in flight on the three
// queues: a call that throws or gives up half-way releases its imported pages only once nothing reads or
// writes them. A call that completed waited for all of it, and a failure of these waits would be lost here.
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

// The caller's pages of a product cut into panels: the split operand's and C's, imported, or (staged) their host
// addresses, each panel's lines then copied through the staging rings by the host's copy threads; c_in: C goes
// in too (EngineImpl::c_goes_in).
struct PanelPages {
  const HostCopies::Imported* split = nullptr;
  const HostCopies::Imported* c = nullptr;
  bool c_in = false;
  bool staged = false;
  const void* split_host = nullptr;
  void* c_host = nullptr;
};

// One product cut into panels, run: each panel's copies (on the engine's copy queues) and product.
class PanelRun {
 public:
  PanelRun(EngineImpl& e, const PanelCut& cut, const GemmDesc& desc, const GemmOptions& options,
           const VulkanBufferRange (&ranges)[kOperands], const OperandIds& ids, const PanelPages& pages)
      : e_(e), t_(e.device->table()), cut_(cut), options_(options), ids_(ids), pages_(pages),
        split_(cut.axis == 'M' ? 0 : 1), lines_(uint64_t(cut.axis == 'M' ? desc.m : desc.n)),
        sv_(line_view(desc, split_ ? 'B' : 'A', cut.axis)), cv_(line_view(desc, 'C', cut.axis)),
        sub_(with_explicit_lds(desc)) {
    const kernels::Types types = kernels::types_of(desc, options);
    es_ = element_size(types.input), cs_ = element_size(types.output);
    for (int i = 0; i < kOperands; ++i) ranges_[i] = ranges[i];
  }

  // Imported: the copies submitted ahead on the copy queues. Staged: each copy is the host's work, complete on
  // return, so the host runs them while the GPU computes the panel before.
  GemmTiming run(std::chrono::steady_clock::time_point start) {
    return pages_.staged ? run_staged(start) : run_imported(start);
  }

 private:
  GemmTiming run_imported(std::chrono::steady_clock::time_point start);
  GemmTiming run_staged(std::chrono::steady_clock::time_point start);
  GemmTiming finished(double upload_ms, std::chrono::steady_clock::time_point computed);
  using clock = std::chrono::steady_clock;
  uint64_t r0(uint64_t i) const { return i * cut_.lines; }
  uint64_t r1(uint64_t i) const { return std::min(lines_, (i + 1) * cut_.lines); }

  // Panel i's lines of the split operand, and of C where it goes in, to the device: submitted (the serial to
  // wait for), or staged (complete, 0).
  uint64_t upload(uint64_t i) {
    if (pages_.staged) {
      stage_up(pages_.split_host, ranges_[split_].buffer, line_copies(sv_, r0(i), r1(i), es_, 0, false));
      if (pages_.c_in) stage_up(pages_.c_host, ranges_[2].buffer, line_copies(cv_, r0(i), r1(i), cs_, 0, false));
      return 0;
    }
    const VkBuffer split_host = pages_.split->buffer.buffer.get(), c_host = pages_.c->buffer.buffer.get();
    uint64_t serial = submit_copies(*e_.copy_up, t_, split_host, ranges_[split_].buffer,
                                    line_copies(sv_, r0(i), r1(i), es_, pages_.split->shift, false), false);
    if (pages_.c_in) {
      serial = submit_copies(*e_.copy_up, t_, c_host, ranges_[2].buffer,
                             line_copies(cv_, r0(i), r1(i), cs_, pages_.c->shift, false), false);
    }
    return serial;
  }

  // Panels [first, last]'s lines of C to the host: the ranges their uploads sent (the gaps after a panel's last
  // line are not C's, for a panel).
  uint64_t download(uint64_t first, uint64_t last) {
    std::vector<VkBufferCopy> regions;
    for (uint64_t i = first; i <= last; ++i) {
      const auto more = line_copies(cv_, r0(i), r1(i), cs_, pages_.staged ? 0 : pages_.c->shift, true);
      regions.insert(regions.end(), more.begin(), more.end());
    }
    if (pages_.staged) {
      for (const VkBufferCopy& r : regions) {
        e_.host_copies->download_staged(ranges_[2].buffer, r.srcOffset, static_cast<char*>(pages_.c_host) + r.dstOffset,
                                        r.size, *e_.copy_down);
      }
      return 0;
    }
    return submit_copies(*e_.copy_down, t_, ranges_[2].buffer, pages_.c->buffer.buffer.get(), regions, true);
  }

  void stage_up(const void* host, VkBuffer device, const std::vector<VkBufferCopy>& regions) {
    for (const VkBufferCopy& r : regions) {
      const char* from = static_cast<const char*>(host) + r.srcOffset;
      e_.host_copies->upload_staged(from, r.size, device, r.dstOffset, *e_.copy_up);
    }
  }

  // Panel i's product submitted: its rows (or columns) of the split operand and C, the rest as the call's.
  void submit_product(uint64_t i) {
    (cut_.axis == 'M' ? sub_.m : sub_.n) = static_cast<int64_t>(r1(i) - r0(i));
    VulkanBufferRange moved[kOperands] = {ranges_[0], ranges_[1], ranges_[2], ranges_[3]};
    for (const auto& [op, step, size] : {std::tuple{split_, sv_.line_step, es_}, std::tuple{2, cv_.line_step, cs_}}) {
      const uint64_t delta = r0(i) * step * size;  // inside the range: the call's extent covers it
      moved[op].offset += delta, moved[op].size -= delta;
    }
    plan_ = e_.cached_plan(sub_, options_, moved, false);
    submitted_ = clock::now();
    serial_ = e_.submit_plan_async(*plan_, moved, nullptr, &ids_);
  }

  // Panel i's product waited for, its timing added to the call's.
  void finish(uint64_t i) {
    const GemmTiming done = e_.await_plan(*plan_, serial_, submitted_);
    for (double ms : done.gpu_ms) gpu_ms_ += ms;
    total_.submit_wait_ms += done.submit_wait_ms;
    total_.gpu_timestamps = done.gpu_timestamps;
    if (i == 0) total_.kernel = done.kernel, total_.config = done.config;
    if (i > 0 && done.kernel != total_.kernel) {
      total_.config += fmt::format("; panel {}: {} {}", i, to_string(done.kernel), done.config);
    }
  }

  EngineImpl& e_;
  const VolkDeviceTable& t_;
  const PanelCut& cut_;
  const GemmOptions& options_;
  const OperandIds& ids_;
  const PanelPages& pages_;
  const int split_;
  const uint64_t lines_;
  const LineView sv_, cv_;
  GemmDesc sub_;
  uint64_t es_ = 0, cs_ = 0;
  VulkanBufferRange ranges_[kOperands];
  std::shared_ptr<GemmPlanState> plan_;  // the product in flight
  uint64_t serial_ = 0;
  clock::time_point submitted_;
  GemmTiming total_;
  double gpu_ms_ = 0.0;
};

GemmTiming PanelRun::run_imported(clock::time_point start) {
  uint64_t next_upload = upload(0);
  double upload_ms = 0.0;
  for (uint64_t i = 0; i < cut_.count; ++i) {
    const uint64_t this_upload = next_upload;
    if (i + 1 < cut_.count) next_upload = upload(i + 1);  // on the copy queue while panel i computes
    e_.copy_up->wait(this_upload);
    // The panel before is collected first: its plan (shared by panels of one shape) is submitted again next.
    // Where C goes in, its values are the caller's input: it comes back only once every product completed, so
    // a call that fails leaves it untouched (the BLAS library's fallback then computes from it).
    if (i > 0) {
      finish(i - 1);
      if (!pages_.c_in) download(i - 1, i - 1);
    }
    if (i == 0) upload_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
    submit_product(i);
  }
  finish(cut_.count - 1);
  const auto computed = clock::now();
  try {
    e_.copy_down->wait(download(pages_.c_in ? 0 : cut_.count - 1, cut_.count - 1));  // and every one before it
  } catch (const Error& e) {
    throw HostCopies::partial_destination(e);
  }
  return finished(upload_ms, computed);
}

GemmTiming PanelRun::run_staged(clock::time_point start) {
  upload(0);
  const double upload_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
  bool landed = false;  // a panel of C reached the caller's memory
  try {
    for (uint64_t i = 0; i < cut_.count; ++i) {
      if (i > 0) finish(i - 1);
      submit_product(i);
      // While panel i computes, the host copies panel i + 1 in, then panel i - 1 out (C's values come back only
      // at the end where they go in, as run_imported's).
      if (i + 1 < cut_.count) upload(i + 1);
      if (i > 0 && !pages_.c_in) landed = true, download(i - 1, i - 1);
    }
    finish(cut_.count - 1);
    const auto computed = clock::now();
    landed = true, download(pages_.c_in ? 0 : cut_.count - 1, cut_.count - 1);
    return finished(upload_ms, computed);
  } catch (const Error& e) {
    if (landed) throw HostCopies::partial_destination(e);
    throw;
  }
}

GemmTiming PanelRun::finished(double upload_ms, clock::time_point computed) {
  if (total_.gpu_timestamps) total_.gpu_ms.push_back(gpu_ms_);
  total_.upload_ms = upload_ms;
  total_.download_ms = std::chrono::duration<double, std::milli>(clock::now() - computed).count();
  const std::string staged =
      pages_.staged ? fmt::format(" (staged by {} host threads)", e_.host_copies->copy_threads()) : "";
  total_.config += fmt::format(", {} panels of {} {} with their copies beside them{}", cut_.count, cut_.lines,
                               cut_.axis == 'M' ? "rows" : "columns", staged);
  return total_;
}

}  // namespace

void EngineImpl::make_copy_queues() {
  const auto spin = vk::wait_spin(WaitMode::automatic, default_wait, physical.info.type);
  for (uint32_t i : {0u, 1u}) {
    auto& s = i ? copy_down : copy_up;
    if (!s) s = std::make_unique<vk::Submitter>(*device, device->copy_queue(i), device->copy_family(), device->timeline(), spin);
  }
}

std::optional<GemmTiming> EngineImpl::gemm_host_panels(const GemmDesc& desc, const HostOperands& host,
                                                       const uint64_t (&bytes)[kOperands], const GemmOptions& options,
                                                       const VulkanBufferRange (&ranges)[kOperands],
                                                       const OperandIds& ids) {
  const PanelCut cut = panel_cut(desc, options, chunked(desc, options), !memory->storage_is_mapped(),
                                 host_copies->knobs().panel_lines);
  if (!cut.count) return std::nullopt;
  const int split = cut.axis == 'M' ? 0 : 1, whole = 1 - split;  // the operand cut with C (A for 'M'), the other
  // Staged where the caller's pages are not imported here (HostCopies::stages), and only where the split
  // operand's lines are contiguous: a panel is then one staged copy, not one per element of a line.
  const bool staged = host_copies->stages();
  if (staged && line_view(desc, split ? 'B' : 'A', cut.axis).inner_step != 1) return std::nullopt;
  make_copy_queues();
  const auto start = std::chrono::steady_clock::now();
  // The pages outlive what is in flight (declared before it: destroyed after its waits).
  std::optional<HostCopies::Imported> whole_pages, split_pages, c_pages;
  InFlight in_flight(*this);
  PanelPages pages{nullptr, nullptr, c_goes_in(desc), staged, split ? host.b : host.a, host.c};
  const void* whole_host = whole ? host.b : host.a;
  if (staged) {
    host_copies->upload_staged(whole_host, bytes[whole], ranges[whole].buffer, 0, *copy_up);
    host_copies->count_staged_panels();
  } else {
    // The operand every panel reads goes first, on the upload queue, while the split operand's and C's pages
    // are pinned (an import is the driver pinning them, a cost that grows with their size).
    whole_pages = host_copies->import(whole_host, bytes[whole], 0);
    if (whole_pages) {
      submit_copies(*copy_up, device->table(), whole_pages->buffer.buffer.get(), ranges[whole].buffer,
                    {VkBufferCopy{whole_pages->shift, 0, bytes[whole]}}, false);
    }
    // Both imports or neither: the caller's serial path copies whatever was not imported.
    split_pages = host_copies->import(pages.split_host, bytes[split], 0);
    if (split_pages) c_pages = host_copies->import(host.c, bytes[2], 0);
    if (!split_pages || !c_pages) return std::nullopt;  // in_flight waits for the copy above
    if (!whole_pages) write(whole ? host_b : host_a, 0, whole_host, bytes[whole]);
    host_copies->count_panels(uint64_t{pages.c_in ? 3u : 2u} + (whole_pages ? 1u : 0u));
    pages.split = &*split_pages, pages.c = &*c_pages;
  }
  write_bias(desc, host.bias);
  GemmTiming timing = PanelRun(*this, cut, desc, options, ranges, ids, pages).run(start);
  in_flight.completed = true;
  return timing;
}

}  // namespace vkgemm::detail
