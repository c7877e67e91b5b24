#include "pblas/kept_buffers.hpp"

namespace vkgemm::pblas {

vkgemm_buffer* KeptBuffers::take(vkgemm_engine* engine, size_t slot, uint64_t bytes, bool& reused) {
  if (engine != engine_) release(), engine_ = engine;  // another engine's buffers serve nothing here
  if (slot >= kept_.size()) kept_.resize(slot + 1);
  Kept& k = kept_[slot];
  reused = k.buffer && k.bytes >= bytes;
  if (reused) return k.buffer;
  vkgemm_buffer_destroy(k.buffer);  // released before the new one: both at once may not fit
  k = {};
  if (vkgemm_buffer_create(engine, bytes, &k.buffer) != VKGEMM_OK) return k.buffer = nullptr;
  k.bytes = bytes;
  return k.buffer;
}

void KeptBuffers::settle(uint64_t device_memory) {
  uint64_t bytes = 0;
  for (const Kept& k : kept_) bytes += k.bytes;
  if (double(bytes) > kMaxKeptShare * double(device_memory)) release();
}

void KeptBuffers::release() {
  for (Kept& k : kept_) vkgemm_buffer_destroy(k.buffer), k = {};
  engine_ = nullptr;
}

KeptBuffers& kept_buffers() {
  static KeptBuffers kept;
  return kept;
}

}  // namespace vkgemm::pblas
