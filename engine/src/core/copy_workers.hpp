// A memcpy spread over host threads: the staged host copies (vk/host_copies.cpp) move every byte through the
// CPU, and one core's copy moves a fraction of what a PCIe Gen5 bus carries (docs/design/host-copies.md).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace vkgemm::detail {

class CopyWorkers {
 public:
  // `threads` copying in all, the caller's among them (1: the caller alone, no thread started). A thread the
  // system refuses to start leaves fewer.
  explicit CopyWorkers(unsigned threads);
  ~CopyWorkers();
  CopyWorkers(const CopyWorkers&) = delete;
  CopyWorkers& operator=(const CopyWorkers&) = delete;

  // How a copy writes its destination. `streaming`: non-temporal stores, which write whole cache lines to
  // memory without reading them first (no read-for-ownership) and leave the caches alone -- for a
  // destination in cached host memory that is larger than the caches, such as the caller's array a download
  // lands in. `plain`: memcpy (write-combined destinations already stream).
  enum class Stores { plain, streaming };

  // `bytes` from `src` to `dst` (not overlapping), complete on return: parts of at least kMinPart bytes, one a
  // thread, the caller copying the first. One copy at a time (the caller's thread is the engine's).
  void copy(void* dst, const void* src, uint64_t bytes, Stores stores = Stores::plain);
  unsigned threads() const noexcept { return static_cast<unsigned>(pool_.size()) + 1; }

  // Below this a part's copy is shorter than waking a thread.
  static constexpr uint64_t kMinPart = 256ull << 10;
  // The threads of the engine's rule: every core up to kMaxThreads (the host memory's bandwidth, not the
  // cores, bounds a copy beyond that: docs/design/host-copies.md).
  static constexpr unsigned kMaxThreads = 16;
  static unsigned default_threads() noexcept;

 private:
  void work(unsigned index);
  void copy_part(unsigned index) const;

  // What the threads and the caller share. Held apart so that a forked child can leave it: its condition
  // variables have the parent's threads as waiters, which the child does not have, and destroying them would
  // wait for those forever.
  struct Shared {
    std::mutex mutex;
    std::condition_variable start, done;
    uint64_t generation = 0;  // one more for each copy the pool takes part in
    unsigned pending = 0;     // parts of the current copy still running on the pool
    bool stop = false;
    char* dst = nullptr;
    const char* src = nullptr;
    uint64_t bytes = 0, part = 0;
    unsigned parts = 0;
    Stores stores = Stores::plain;
  };
  // The process that started the threads: a child forked since has none of them (it copies alone).
  const long owner_;
  std::unique_ptr<Shared> shared_;
  std::vector<std::thread> pool_;
};

}  // namespace vkgemm::detail
