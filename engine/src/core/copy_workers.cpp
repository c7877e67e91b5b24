#include "core/copy_workers.hpp"

#include <algorithm>
#include <cstring>
#include <system_error>

namespace vkgemm::detail {

unsigned CopyWorkers::default_threads() noexcept {
  return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
}

CopyWorkers::CopyWorkers(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i) {
    try {
      pool_.emplace_back([this, i] { work(i); });
    } catch (const std::system_error&) {  // no more threads: the ones started share the copies
      break;
    }
  }
}

CopyWorkers::~CopyWorkers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : pool_) t.join();
}

void CopyWorkers::copy_part(unsigned index) const {
  const uint64_t begin = std::min(bytes_, index * part_), end = std::min(bytes_, begin + part_);
  if (begin < end) std::memcpy(dst_ + begin, src_ + begin, end - begin);
}

void CopyWorkers::work(unsigned index) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= parts_) continue;  // this copy has fewer parts than threads
    }
    copy_part(index);
    std::lock_guard lock(mutex_);
    if (--pending_ == 0) done_.notify_one();
  }
}

void CopyWorkers::copy(void* dst, const void* src, uint64_t bytes) {
  const uint64_t most = std::max<uint64_t>(1, bytes / kMinPart);
  const unsigned parts = static_cast<unsigned>(std::min<uint64_t>(threads(), most));
  if (parts <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    dst_ = static_cast<char*>(dst), src_ = static_cast<const char*>(src), bytes_ = bytes;
    part_ = ((bytes + parts - 1) / parts + 63) / 64 * 64;  // whole cache lines a part
    parts_ = parts, pending_ = parts - 1;
    ++generation_;
  }
  start_.notify_all();
  copy_part(0);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

}  // namespace vkgemm::detail
