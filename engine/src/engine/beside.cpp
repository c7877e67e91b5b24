// Products beside writes (vkgemm/beside.hpp): a product submitted without waiting, kept in
// EngineImpl::beside_products until seen complete; a write on the upload copy queue whose last copies the
// compute queue's next submission waits for on the device.
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "vkgemm/beside.hpp"

namespace vkgemm {
namespace detail {
namespace {

// Drops the products seen complete: their plans and buffers are free again.
void drop_completed(vk::Submitter& s, std::vector<EngineImpl::BesideProduct>& products) {
  std::erase_if(products, [&](const EngineImpl::BesideProduct& p) { return s.done(p.serial); });
}

}  // namespace

uint64_t EngineImpl::submit_beside(const GemmDesc& desc, const BufferOffset (&ops)[kOperands], const GemmOptions& options) {
  BufferCall call = admit_buffers(desc, ops, options, "submit_beside");
  if (call.chunked) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("submit_beside: GemmOptions::max_k_per_submission = {} cuts K = {} into submissions the "
                            "host waits for one by one; run it with Engine::gemm, or leave max_k_per_submission 0",
                            options.max_k_per_submission, desc.k));
  }
  if (!call.plan) return 0;  // an empty product: nothing to run
  drop_completed(*submitter, beside_products);
  const uint64_t serial = submit_plan_async(*call.plan, call.ranges, nullptr, &call.ids);
  beside_products.push_back({serial, std::move(call.plan), call.ids});
  return serial;
}

void EngineImpl::write_beside(Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
  device->check_alive("write_beside");
  const BufferImpl& dst = owned(buffer, "write_beside");
  check_range("write_beside", offset, bytes, dst.alloc.size);
  if (bytes == 0) return;
  if (!data) throw Error(ErrorCode::invalid_argument, "write_beside: the source pointer is null");
  // The products in flight that use the buffer read or write what the copy replaces: they complete first.
  for (const BesideProduct& p : beside_products) {
    if (std::find(p.ids.begin(), p.ids.end(), dst.id) != p.ids.end()) submitter->wait(p.serial);
  }
  drop_completed(*submitter, beside_products);
  if (dst.alloc.mapped && host_copies->knobs().path == HostCopyPath::automatic) {
    // Host-mapped storage: the host's memcpy (after a write beside still running, which may cover the range).
    if (beside_write) copy_up->wait(std::exchange(beside_write, 0));
    host_copies->upload(data, bytes, dst.alloc, offset);
    return;
  }
  make_copy_queues();
  const uint64_t last = host_copies->upload_staged(data, bytes, dst.alloc.buffer.get(), offset, *copy_up, true);
  if (!submitter->timeline() || !copy_up->timeline()) {
    // No timeline semaphore to wait on: complete on return.
    host_copies->settle_upload_ring();
    return;
  }
  beside_write = std::max(beside_write, last);
  submitter->wait_before_next(copy_up->timeline(), last);
}

bool EngineImpl::wait_beside(uint64_t serial, std::chrono::nanoseconds timeout) {
  if (serial > submitter->last_serial()) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("wait_beside: {} is no submission of this engine (the latest is {}); pass a value "
                            "submit_beside returned, or 0 for everything in flight",
                            serial, submitter->last_serial()));
  }
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto left = [&] {
    const std::chrono::nanoseconds spent = clock::now() - start;
    return spent >= timeout ? std::chrono::nanoseconds{0} : timeout - spent;
  };
  if (serial) {
    const bool complete = submitter->wait_for(serial, timeout);
    drop_completed(*submitter, beside_products);
    return complete;
  }
  for (const BesideProduct& p : beside_products) {
    if (!submitter->wait_for(p.serial, left())) return false;
  }
  beside_products.clear();
  if (beside_write && !copy_up->wait_for(beside_write, left())) return false;
  beside_write = 0;
  host_copies->settle_upload_ring();  // its copies are the writes' own, complete by now
  return true;
}

}  // namespace detail

GemmSubmission submit_beside(Engine& engine, const GemmDesc& desc, const BufferOffset& a, const BufferOffset& b,
                             const BufferOffset& c, const GemmOptions& options, const BufferOffset& bias) {
  detail::EngineImpl& e = detail::Access::impl(engine);
  std::lock_guard guard(e.lock);
  const uint64_t serial = e.submit_beside(desc, {a, b, c, bias}, options);
  return serial ? detail::Access::submission(e, serial) : GemmSubmission{};
}

void write_beside(Engine& engine, Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
  detail::EngineImpl& e = detail::Access::impl(engine);
  std::lock_guard guard(e.lock);
  e.write_beside(buffer, offset, data, bytes);
}

bool wait_beside(Engine& engine, uint64_t product, std::chrono::nanoseconds timeout) {
  detail::EngineImpl& e = detail::Access::impl(engine);
  std::lock_guard guard(e.lock);
  return e.wait_beside(product, timeout);
}

}  // namespace vkgemm
