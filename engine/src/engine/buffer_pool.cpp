#include "engine/buffer_pool.hpp"

#include <utility>

namespace vkgemm::detail {

std::optional<vk::AllocatedBuffer> BufferPool::take(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  for (size_t i = kept_.size(); i-- > 0;) {
    if (kept_[i].size != bytes) continue;
    vk::AllocatedBuffer out = std::move(kept_[i]);
    kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i));
    bytes_ -= bytes;
    return out;
  }
  return std::nullopt;
}

void BufferPool::keep(vk::AllocatedBuffer buffer) {
  if (buffer.size > limit_) return;  // released here, as it goes out of scope
  std::vector<vk::AllocatedBuffer> released;  // released outside the lock
  {
    std::lock_guard lock(mutex_);
    bytes_ += buffer.size;
    kept_.push_back(std::move(buffer));
    size_t drop = 0;
    while (bytes_ > limit_ || kept_.size() - drop > kMaxBuffers) bytes_ -= kept_[drop++].size;
    released.assign(std::make_move_iterator(kept_.begin()),
                    std::make_move_iterator(kept_.begin() + static_cast<std::ptrdiff_t>(drop)));
    kept_.erase(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(drop));
  }
}

uint64_t BufferPool::clear() {
  std::vector<vk::AllocatedBuffer> released;
  std::lock_guard lock(mutex_);
  released.swap(kept_);
  return std::exchange(bytes_, 0);
}

uint64_t BufferPool::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

size_t BufferPool::count() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

}  // namespace vkgemm::detail
