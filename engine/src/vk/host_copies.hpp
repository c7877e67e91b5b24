// Copies between host memory and the engine's storage buffers: the one path under Engine::write and
// Engine::read, and so under every host-memory product (Engine::gemm on host pointers, the C ABI, the
// drop-in BLAS, the Python module). The rules and why: docs/design/host-copies.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include "core/copy_workers.hpp"
#include "vk/device.hpp"
#include "vk/memory.hpp"
#include "vk/submitter.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::detail {

// Which way the host-memory copies go: the engine's rule, or every copy one way (the testing knobs
// VKGEMM_TEST_HOST_COPIES and VKGEMM_TEST_STAGING_CHUNK, engine/environment.cpp).
enum class HostCopyPath { automatic, import, staging };
struct HostCopyKnobs {
  HostCopyPath path = HostCopyPath::automatic;
  uint64_t staging_chunk = 0;  // 0: the engine's own
  // Panels of this many lines wherever a product may be cut (VKGEMM_TEST_HOST_PANELS, engine/host_panels.cpp),
  // whatever its size and device; 0: the engine's rule; kNoPanels: never cut (the whole path, to compare).
  uint64_t panel_lines = 0;
  static constexpr uint64_t kNoPanels = ~uint64_t{0};
  // Host threads a staged copy's memcpy is spread over (VKGEMM_TEST_COPY_THREADS); 0: CopyWorkers' rule.
  unsigned copy_threads = 0;
};

// How many copies went each way since the engine was made (the tests' view).
struct HostCopyCounts {
  uint64_t mapped = 0;    // a memcpy into or out of a mapped storage buffer
  uint64_t imported = 0;  // one device copy from or to the caller's own pages
  uint64_t staged = 0;    // through the staging ring
  uint64_t refused = 0;   // imports the driver refused (then staged)
  uint64_t panels = 0;    // products cut into panels, their copies beside them (engine/host_panels.cpp)
};

class HostCopies {
 public:
  HostCopies(const vk::Device& device, const vk::MemoryAllocator& memory, vk::Submitter& submitter,
             const DeviceInfo& info, HostCopyKnobs knobs);

  // `bytes` from the host's `src` into `dst` at `offset`, complete on return. The range was checked.
  void upload(const void* src, uint64_t bytes, const vk::AllocatedBuffer& dst, uint64_t offset);
  // `bytes` of `src` at `offset` into the host's `dst`, complete on return. The range was checked. A failure
  // once bytes may have reached `dst` (the device lost while copying into the caller's pages, a chunk's wait
  // failing after earlier chunks landed) says so in its message (kPartialDestination): `dst` is unspecified.
  void download(const vk::AllocatedBuffer& src, uint64_t offset, void* dst, uint64_t bytes);
  // The staged way alone, on `queue` (the engine's compute queue, or a copy queue beside the products), complete
  // on return: what the staged panels run (engine/host_panels.cpp). Counted as staged.
  // `leave_last`: returns once the host filled the last chunk, its copies perhaps still running (the serial of
  // the last, 0 where none remains); the next staged upload waits for them before it refills their slots.
  uint64_t upload_staged(const void* src, uint64_t bytes, VkBuffer dst, uint64_t offset, vk::Submitter& queue,
                         bool leave_last = false);
  // Waits for the copies an upload_staged left running.
  void settle_upload_ring();
  void download_staged(VkBuffer src, uint64_t offset, void* dst, uint64_t bytes, vk::Submitter& queue);
  // How many host threads a staged copy's memcpy is spread over (the knob's count, else CopyWorkers' rule),
  // fixed when the engine is made: the rule between the paths (stages) asks it at every copy.
  unsigned copy_threads() const noexcept { return threads_; }
  static constexpr const char* kPartialDestination =
      " (while the bytes came into host memory: the destination may hold part of them)";

  const HostCopyCounts& counts() const noexcept { return counts_; }
  const HostCopyKnobs& knobs() const noexcept { return knobs_; }
  // Whether host memory goes through the staging rings, never imported: where the device cannot import (no
  // extension, or an alignment above the page size), by the testing knob, and by the rule where the engine
  // has kStagingThreads copy threads or more. The imported path pays the driver's pinning of the caller's
  // pages at each call, about as slow as one core's memcpy; several copy threads filling rings that are
  // pinned once move more (docs/design/host-copies.md, measured on the H200).
  bool stages() const noexcept;
  static constexpr unsigned kStagingThreads = 4;

  // A staging chunk, and how many chunks the ring of each direction holds: the copy of one chunk runs while
  // the host copies the next (upload) or the one before (download).
  static constexpr uint64_t kChunk = 8ull << 20;
  static constexpr uint64_t kSlots = 4;
  // Below this many bytes a copy is staged, not imported: an import pins pages and creates a buffer, a fixed
  // cost a small memcpy does not have.
  static constexpr uint64_t kImportMin = 1ull << 20;

  // The caller's pages around [p, p + bytes), rounded out to the import alignment, as a transfer buffer, and
  // where p lies in it; empty where this range is not imported (the rule, or the driver refused). The pages
  // must stay mapped while it lives. `copies`: the copies it will serve, counted as imported.
  struct Imported {
    vk::AllocatedBuffer buffer;
    uint64_t shift = 0;
  };
  std::optional<Imported> import(const void* p, uint64_t bytes, uint64_t copies = 1);
  // A product cut into panels (engine/host_panels.cpp), its imports serving `copies` copies.
  void count_panels(uint64_t copies) noexcept { ++counts_.panels, counts_.imported += copies; }
  void count_staged_panels() noexcept { ++counts_.panels; }
  // `e` with kPartialDestination added: a copy into host memory failed once bytes may have landed there.
  static Error partial_destination(const Error& e);

 private:
  bool imports(uint64_t bytes) const;
  // A staging ring of at least min(bytes, kSlots chunks) (grown here), and its slots' size.
  uint64_t ring(std::optional<vk::AllocatedBuffer>& ring, vk::MemoryUse use, uint64_t bytes, const char* name);
  CopyWorkers& workers();  // made at the first staged copy

  const vk::Device& device_;
  const vk::MemoryAllocator& memory_;
  vk::Submitter& submitter_;
  HostCopyKnobs knobs_;
  unsigned threads_;  // copy_threads()
  uint64_t chunk_ = kChunk;
  uint64_t alignment_ = 0;  // the import's; 0: no import (no extension, or an alignment above the page size)
  std::optional<vk::AllocatedBuffer> upload_ring_, download_ring_;
  // The upload ring's copies an upload_staged left running, on `left_queue_`, by slot.
  vk::Submitter* left_queue_ = nullptr;
  std::array<uint64_t, kSlots> left_{};
  std::unique_ptr<CopyWorkers> workers_;
  HostCopyCounts counts_;
};

}  // namespace vkgemm::detail
