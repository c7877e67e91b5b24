#include "vk/host_copies.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "vk/check.hpp"
#include "vk/commands.hpp"

namespace vkgemm::detail {
namespace {

// Waits, when it goes, for the submissions still using a staging ring: a copy that throws half-way leaves
// none running into the ring the next copy takes. A copy that completes waits for its own (a failure then
// throws): these waits swallow theirs.
struct Pending {
  explicit Pending(vk::Submitter& s) : submitter(s) {}
  ~Pending() {
    for (const uint64_t serial : serials) {
      try {
        if (serial) submitter.wait(serial);
      } catch (...) {  // a lost device: nothing runs any more
      }
    }
  }
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;
  vk::Submitter& submitter;
  std::array<uint64_t, HostCopies::kSlots> serials{};
};

// The stages that may have used a buffer before a copy on `queue`: the kernels too on the compute queue; a copy
// queue's barriers may name only the stages its family supports (the host orders it after the kernels).
struct Before {
  VkPipelineStageFlags stages;
  VkAccessFlags reads, writes;
};
Before before_on(bool compute_queue) {
  if (!compute_queue) {
    return {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
  }
  return {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
}

// A copy into `dst`: kernels and copies before it are done with the destination.
void record_upload(const VolkDeviceTable& t, VkCommandBuffer cmd, VkBuffer src, VkBuffer dst,
                   const VkBufferCopy& region, bool compute_queue = true) {
  const Before b = before_on(compute_queue);
  vk::memory_barrier(t, cmd, b.stages, b.reads | b.writes, VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_TRANSFER_WRITE_BIT);
  t.vkCmdCopyBuffer(cmd, src, dst, 1, &region);
}

// A copy out of `src` for the host: the writes before it are done, and the host sees what it wrote.
void record_download(const VolkDeviceTable& t, VkCommandBuffer cmd, VkBuffer src, VkBuffer dst,
                     const VkBufferCopy& region, bool compute_queue = true) {
  const Before b = before_on(compute_queue);
  vk::memory_barrier(t, cmd, b.stages, b.writes, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  t.vkCmdCopyBuffer(cmd, src, dst, 1, &region);
  vk::memory_barrier(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                 VK_ACCESS_HOST_READ_BIT);
}

// The import's alignment where rounding a range out to it stays inside the pages that hold the range (every
// byte of those is mapped: the range's own bytes are), else 0: a larger alignment could reach a page that is
// not mapped, and the import would fail or pin memory the caller does not own.
uint64_t usable_alignment(const DeviceInfo& info) {
  const long page = sysconf(_SC_PAGESIZE);
  const uint64_t a = info.imported_host_alignment;
  const bool power_of_two = a && !(a & (a - 1));
  return info.host_import && power_of_two && page > 0 && a <= uint64_t(page) ? a : 0;
}

}  // namespace

HostCopies::HostCopies(const vk::Device& device, const vk::MemoryAllocator& memory, vk::Submitter& submitter,
                       const DeviceInfo& info, HostCopyKnobs knobs)
    : device_(device), memory_(memory), submitter_(submitter), knobs_(knobs),
      threads_(knobs.copy_threads ? knobs.copy_threads : CopyWorkers::default_threads()),
      chunk_(knobs.staging_chunk ? knobs.staging_chunk : kChunk), alignment_(usable_alignment(info)) {}

bool HostCopies::stages() const noexcept {
  if (!alignment_ || knobs_.path == HostCopyPath::staging) return true;
  if (knobs_.path == HostCopyPath::import) return false;
  return copy_threads() >= kStagingThreads;
}

bool HostCopies::imports(uint64_t bytes) const {
  if (stages()) return false;
  return knobs_.path == HostCopyPath::import || bytes >= kImportMin;
}

std::optional<HostCopies::Imported> HostCopies::import(const void* p, uint64_t bytes, uint64_t copies) {
  if (!imports(bytes)) return std::nullopt;
  const auto address = reinterpret_cast<uintptr_t>(p);
  const uintptr_t base = address & ~uintptr_t(alignment_ - 1);
  const uint64_t end = (uint64_t(address) + bytes + alignment_ - 1) & ~uint64_t(alignment_ - 1);
  auto buffer = memory_.import_host(reinterpret_cast<const void*>(base), end - base, "vkgemm imported host range");
  if (!buffer) {
    ++counts_.refused;
    return std::nullopt;
  }
  counts_.imported += copies;
  return Imported{std::move(*buffer), address - base};
}

uint64_t HostCopies::ring(std::optional<vk::AllocatedBuffer>& ring, vk::MemoryUse use, uint64_t bytes,
                          const char* name) {
  // A power of two from 64 KiB: calls of growing sizes remake the ring a few times, not at each call.
  const uint64_t wanted = std::min(std::max(std::bit_ceil(bytes), uint64_t{64} << 10), kSlots * chunk_);
  if (!ring || ring->size < wanted) {
    ring.reset();  // the old one's memory first: the new one may need it
    ring = memory_.create(wanted, use, name);
  }
  return std::min(chunk_, ring->size / std::max<uint64_t>(1, ring->size / chunk_));
}

void HostCopies::upload(const void* src, uint64_t bytes, const vk::AllocatedBuffer& dst, uint64_t offset) {
  if (dst.mapped && knobs_.path == HostCopyPath::automatic) {
    std::memcpy(static_cast<char*>(dst.mapped) + offset, src, bytes);
    ++counts_.mapped;
    return;
  }
  if (auto imported = import(src, bytes)) {
    const auto& t = device_.table();
    submitter_.run([&](VkCommandBuffer cmd) {
      record_upload(t, cmd, imported->buffer.buffer.get(), dst.buffer.get(), VkBufferCopy{imported->shift, offset, bytes});
    });
    return;
  }
  upload_staged(src, bytes, dst.buffer.get(), offset, submitter_);
}

void HostCopies::download(const vk::AllocatedBuffer& src, uint64_t offset, void* dst, uint64_t bytes) {
  // A mapped buffer that is not cached is read faster by a device copy than by the host.
  if (src.mapped && src.cached && knobs_.path == HostCopyPath::automatic) {
    memory_.invalidate(src);
    std::memcpy(dst, static_cast<const char*>(src.mapped) + offset, bytes);
    ++counts_.mapped;
    return;
  }
  auto imported = import(dst, bytes);
  try {
    if (!imported) return download_staged(src.buffer.get(), offset, dst, bytes, submitter_);
    const auto& t = device_.table();
    submitter_.run([&](VkCommandBuffer cmd) {
      record_download(t, cmd, src.buffer.get(), imported->buffer.buffer.get(), VkBufferCopy{offset, imported->shift, bytes});
    });
  } catch (const Error& e) {
    throw partial_destination(e);
  }
}

Error HostCopies::partial_destination(const Error& e) {
  return Error(e.code(), std::string(e.what()) + kPartialDestination, e.vk_result());
}

CopyWorkers& HostCopies::workers() {
  if (!workers_) workers_ = std::make_unique<CopyWorkers>(copy_threads());
  return *workers_;
}

uint64_t HostCopies::upload_staged(const void* src, uint64_t bytes, VkBuffer dst, uint64_t offset, vk::Submitter& queue,
                                   bool leave_last) {
  settle_upload_ring();  // their slots are refilled below
  const uint64_t slot = ring(upload_ring_, vk::MemoryUse::upload, bytes, "vkgemm upload staging");
  const uint64_t slots = upload_ring_->size / slot;
  const auto& t = device_.table();
  CopyWorkers& threads = workers();
  Pending pending(queue);
  uint64_t last = 0;
  // Chunk j goes through slot j % slots: the host fills one while the device copies the ones before.
  for (uint64_t done = 0, j = 0; done < bytes; done += slot, ++j) {
    const uint64_t n = std::min(slot, bytes - done);
    uint64_t& serial = pending.serials[j % slots];
    if (serial) queue.wait(std::exchange(serial, 0));  // the slot's last copy has read it
    char* at = static_cast<char*>(upload_ring_->mapped) + (j % slots) * slot;
    threads.copy(at, static_cast<const char*>(src) + done, n);  // coherent: the submission makes it visible
    last = serial = queue.submit([&](VkCommandBuffer cmd) {
      record_upload(t, cmd, upload_ring_->buffer.get(), dst, VkBufferCopy{(j % slots) * slot, offset + done, n},
                    &queue == &submitter_);
    });
  }
  ++counts_.staged;
  if (leave_last) {
    left_queue_ = &queue, left_ = std::exchange(pending.serials, {});
    return last;
  }
  // The last copies waited for here, where a failed wait throws; Pending's own waits are for a copy that threw.
  for (uint64_t& serial : pending.serials) {
    if (serial) queue.wait(std::exchange(serial, 0));
  }
  return 0;
}

void HostCopies::settle_upload_ring() {
  for (uint64_t& serial : left_) {
    if (serial) left_queue_->wait(std::exchange(serial, 0));
  }
}

void HostCopies::download_staged(VkBuffer src, uint64_t offset, void* dst, uint64_t bytes, vk::Submitter& queue) {
  const uint64_t slot = ring(download_ring_, vk::MemoryUse::download, bytes, "vkgemm download staging");
  const uint64_t slots = download_ring_->size / slot;
  const uint64_t chunks = (bytes + slot - 1) / slot;
  const auto& t = device_.table();
  CopyWorkers& threads = workers();
  Pending pending(queue);
  const auto copy = [&](uint64_t j) {
    const uint64_t done = j * slot, n = std::min(slot, bytes - done);
    pending.serials[j % slots] = queue.submit([&](VkCommandBuffer cmd) {
      record_download(t, cmd, src, download_ring_->buffer.get(), VkBufferCopy{offset + done, (j % slots) * slot, n},
                      &queue == &submitter_);
    });
  };
  // The device copies up to `slots` chunks ahead of the host, which copies each out once it landed.
  for (uint64_t j = 0; j < std::min(slots, chunks); ++j) copy(j);
  for (uint64_t j = 0; j < chunks; ++j) {
    queue.wait(std::exchange(pending.serials[j % slots], 0));
    memory_.invalidate(*download_ring_);
    const uint64_t done = j * slot;
    // Streaming stores: the caller's array is written once, past the caches, without reading it first.
    threads.copy(static_cast<char*>(dst) + done, static_cast<const char*>(download_ring_->mapped) + (j % slots) * slot,
                 std::min(slot, bytes - done), CopyWorkers::Stores::streaming);
    if (j + slots < chunks) copy(j + slots);
  }
  ++counts_.staged;
}

}  // namespace vkgemm::detail
