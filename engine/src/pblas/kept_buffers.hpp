// The streamed product's device buffers (two for A's K blocks, written and multiplied in turn, and a C and a B
// for each part of the product: streamed.cpp numbers the slots), kept from one PDGEMM to the next: device
// memory is slow to allocate (about 65 ms a GB on the H200, a quarter of a second of a two-rank call at
// n = 24576), and a program calls PDGEMM again and again on operands of the same sizes. A kept buffer serves a
// later call that needs no more than it holds; a larger need, or another engine, makes it anew. What stays
// between calls is at most kMaxKeptShare of the device's memory (else every buffer is released after the
// call); the rest is released at exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "vkgemm/vkgemm.h"

namespace vkgemm::pblas {

class KeptBuffers {
 public:
  static constexpr double kMaxKeptShare = 0.25;

  KeptBuffers() = default;
  KeptBuffers(const KeptBuffers&) = delete;
  KeptBuffers& operator=(const KeptBuffers&) = delete;
  ~KeptBuffers() { release(); }

  // Buffer `slot` holding at least `bytes` on `engine`: the kept one where it does, else a new one (the kept
  // one released first); null where the engine refuses (vkgemm_last_error says why). `reused` tells which.
  vkgemm_buffer* take(vkgemm_engine* engine, size_t slot, uint64_t bytes, bool& reused);
  // After a call: keeps the buffers where their bytes are within kMaxKeptShare of `device_memory`, else
  // releases them.
  void settle(uint64_t device_memory);
  void release();

  std::mutex mutex;  // held by a call from its first take to its settle (one streamed product at a time)

 private:
  struct Kept {
    vkgemm_buffer* buffer = nullptr;
    uint64_t bytes = 0;
  };
  vkgemm_engine* engine_ = nullptr;
  std::vector<Kept> kept_;  // by slot
};

// The process's.
KeptBuffers& kept_buffers();

}  // namespace vkgemm::pblas
