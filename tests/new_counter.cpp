#include "new_counter.hpp"
#include "sanitizer.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_news{0};
}  // namespace

#ifndef VKGEMM_TEST_SANITIZED  // a sanitizer's runtime owns operator new
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
namespace vkgemm::test {
bool new_counter_available() noexcept { return true; }
}  // namespace vkgemm::test
#else
namespace vkgemm::test {
bool new_counter_available() noexcept { return false; }
}  // namespace vkgemm::test
#endif

namespace vkgemm::test {
void count_news(bool on) noexcept { g_counting.store(on); }
uint64_t news_counted() noexcept { return g_news.load(); }
}  // namespace vkgemm::test
