#include "core/copy_workers.hpp"

#include <algorithm>
#include <cstring>
#include <system_error>

#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vkgemm::detail {
namespace {

// memcpy with non-temporal stores for the 64-byte-aligned body of dst (memcpy for the head and tail, and on
// targets without SSE2). The fence orders the weakly ordered streaming stores before whatever the caller
// signals next (the part's completion, another thread's read).
void copy_streaming(char* dst, const char* src, uint64_t bytes) {
#if defined(__SSE2__)
  const uint64_t head = std::min<uint64_t>(bytes, (64 - reinterpret_cast<uintptr_t>(dst) % 64) % 64);
  std::memcpy(dst, src, head);
  dst += head, src += head, bytes -= head;
  for (; bytes >= 64; dst += 64, src += 64, bytes -= 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), d);
  }
  _mm_sfence();
#endif
  std::memcpy(dst, src, bytes);
}

void copy_with(CopyWorkers::Stores stores, char* dst, const char* src, uint64_t bytes) {
  if (stores == CopyWorkers::Stores::streaming) {
    copy_streaming(dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

}  // namespace

unsigned CopyWorkers::default_threads() noexcept {
  return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
}

CopyWorkers::CopyWorkers(unsigned threads) : owner_(static_cast<long>(getpid())), shared_(std::make_unique<Shared>()) {
  for (unsigned i = 1; i < threads; ++i) {
    try {
      pool_.emplace_back([this, i] { work(i); });
    } catch (const std::system_error&) {  // no more threads: the ones started share the copies
      break;
    }
  }
}

CopyWorkers::~CopyWorkers() {
  if (static_cast<long>(getpid()) != owner_) {  // a forked child: the threads and their waits are the parent's
    for (auto& t : pool_) t.detach();
    (void)shared_.release();
    return;
  }
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stop = true;
  }
  shared_->start.notify_all();
  for (auto& t : pool_) t.join();
}

void CopyWorkers::copy_part(unsigned index) const {
  const Shared& s = *shared_;
  const uint64_t begin = std::min(s.bytes, index * s.part), end = std::min(s.bytes, begin + s.part);
  if (begin < end) copy_with(s.stores, s.dst + begin, s.src + begin, end - begin);
}

void CopyWorkers::work(unsigned index) {
  Shared& s = *shared_;
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(s.mutex);
      s.start.wait(lock, [&] { return s.stop || s.generation != seen; });
      if (s.stop) return;
      seen = s.generation;
      if (index >= s.parts) continue;  // this copy has fewer parts than threads
    }
    copy_part(index);
    std::lock_guard lock(s.mutex);
    if (--s.pending == 0) s.done.notify_one();
  }
}

void CopyWorkers::copy(void* dst, const void* src, uint64_t bytes, Stores stores) {
  if (bytes < kMinPart) stores = Stores::plain;  // small enough that the caches may serve whoever reads it next
  const uint64_t most = std::max<uint64_t>(1, bytes / kMinPart);
  const unsigned parts = static_cast<unsigned>(std::min<uint64_t>(threads(), most));
  if (parts <= 1 || static_cast<long>(getpid()) != owner_) {
    copy_with(stores, static_cast<char*>(dst), static_cast<const char*>(src), bytes);
    return;
  }
  Shared& s = *shared_;
  {
    std::lock_guard lock(s.mutex);
    s.dst = static_cast<char*>(dst), s.src = static_cast<const char*>(src), s.bytes = bytes;
    s.part = ((bytes + parts - 1) / parts + 63) / 64 * 64;  // whole cache lines a part
    s.parts = parts, s.pending = parts - 1, s.stores = stores;
    ++s.generation;
  }
  s.start.notify_all();
  copy_part(0);
  std::unique_lock lock(s.mutex);
  s.done.wait(lock, [&] { return s.pending == 0; });
}

}  // namespace vkgemm::detail
