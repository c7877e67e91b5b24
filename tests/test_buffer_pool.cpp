// The engine's pool of freed buffers (engine/buffer_pool.hpp): a buffer of a size freed before takes that
// allocation (its Vulkan buffer) and a new id, products into and from reused buffers are right whatever they
// held, and the pool keeps within its bounds. (Its release on an allocation out of memory: the faults suite.)
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

namespace {

VkBuffer handle(const Buffer& b) { return detail::Access::impl(b)->alloc.buffer.get(); }
uint64_t id(const Buffer& b) { return detail::Access::impl(b)->id; }

}  // namespace

TEST_SUITE("buffer pool") {
  TEST_CASE("a freed buffer's allocation serves the next buffer of its size, under a new id; another size not") {
    auto e = test::make_engine();
    const detail::BufferPool& pool = *detail::Access::impl(*e).buffer_pool;
    VkBuffer first = VK_NULL_HANDLE;
    uint64_t first_id = 0;
    {
      Buffer b = e->create_buffer(12345);
      first = handle(b), first_id = id(b);
    }
    CHECK(pool.count() == 1);
    CHECK(pool.bytes() == 12345);
    Buffer other = e->create_buffer(12346);
    CHECK(handle(other) != first);
    CHECK(pool.count() == 1);
    Buffer again = e->create_buffer(12345);
    CHECK(handle(again) == first);
    CHECK(id(again) != first_id);
    CHECK(pool.count() == 0);
  }

  TEST_CASE("products into and from reused buffers are right, whatever those held before") {
    auto rng = test::case_rng(test::current_case_name());
    auto e = test::make_engine();
    const uint32_t m = 67, n = 45, k = 33;
    for (int round = 0; round < 3; ++round) {
      CAPTURE(round);
      Buffer a = e->create_buffer(m * k * 4), b = e->create_buffer(k * n * 4), c = e->create_buffer(m * n * 4);
      const auto av = test::random_floats(size_t{m} * k, rng), bv = test::random_floats(size_t{k} * n, rng);
      e->write(a, 0, av.data(), av.size() * 4);
      e->write(b, 0, bv.data(), bv.size() * 4);
      e->gemm({&a, 0, m, k}, {&b, 0, k, n}, {&c, 0, m, n});
      std::vector<float> cv(size_t{m} * n);
      e->read(c, 0, cv.data(), cv.size() * 4);
      const Comparison r = compare_with_reference(DataType::f32, m, n, k, av.data(), bv.data(), cv.data());
      CHECK_MESSAGE(r.passed, fmt::format("{} elements off, the first at {}", r.bad_elements, r.first_bad));
      if (round > 0) CHECK(detail::Access::impl(*e).buffer_pool->count() == 0);  // all three reused
    }
  }

  TEST_CASE("the bounds: at most kMaxBuffers and the byte limit kept, the oldest released first") {
    detail::BufferPool pool(uint64_t{8} << 10);  // a heap of 8 KiB: a limit of 1 KiB
    const auto fake = [](uint64_t bytes) {
      vk::AllocatedBuffer b;
      b.size = bytes;
      return b;
    };
    pool.keep(fake(2048));  // above the limit: not kept
    CHECK(pool.count() == 0);
    for (uint64_t i = 1; i <= 5; ++i) pool.keep(fake(i * 100));  // 1500 bytes: the oldest three go
    CHECK(pool.bytes() == 900);
    CHECK(pool.count() == 2);
    CHECK(!pool.take(300));
    CHECK(pool.take(400));
    CHECK(pool.clear() == 500);
    detail::BufferPool big(uint64_t{1} << 40);
    for (size_t i = 0; i < detail::BufferPool::kMaxBuffers + 8; ++i) big.keep(fake(64 + i));
    CHECK(big.count() == detail::BufferPool::kMaxBuffers);
    CHECK(!big.take(64));  // among the oldest, released
    CHECK(big.take(64 + detail::BufferPool::kMaxBuffers + 7));
  }
}
