// The engine's freed storage buffers, kept for the next buffer of the same size: a device allocation and its
// release cost milliseconds on a discrete GPU's driver (docs/design/host-copies.md, "Device arrays"), which a
// chain of products on device arrays would pay at each new result. Bounded (kMaxBytes, kMaxBuffers, and an
// eighth of the device's largest heap); emptied when an allocation runs out of memory, and with the engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "vk/memory.hpp"

namespace vkgemm::detail {

class BufferPool {
 public:
  explicit BufferPool(uint64_t heap_bytes) : limit_(std::min(kMaxBytes, heap_bytes / 8)) {}

  // A kept buffer of exactly `bytes`, the most recently kept first; empty where none is.
  std::optional<vk::AllocatedBuffer> take(uint64_t bytes);
  // Keeps `buffer` (its contents are undefined to the next taker), releasing the oldest past the bounds; one
  // larger than the bound is released at once.
  void keep(vk::AllocatedBuffer buffer);
  // Releases every kept buffer; how many bytes they held.
  uint64_t clear();
  uint64_t bytes() const;
  size_t count() const;

  static constexpr uint64_t kMaxBytes = uint64_t{2} << 30;
  static constexpr size_t kMaxBuffers = 32;

 private:
  const uint64_t limit_;
  mutable std::mutex mutex_;
  std::vector<vk::AllocatedBuffer> kept_;  // oldest first
  uint64_t bytes_ = 0;
};

}  // namespace vkgemm::detail
