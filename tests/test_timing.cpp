// Timestamps: one per repetition, positive, ordered sensibly with the work, and apart from transfers.
#include <doctest/doctest.h>

#include <vector>

#include "support.hpp"

using namespace vkgemm;

TEST_SUITE("timing") {
  TEST_CASE("timestamps are sane") {
    Engine& e = test::engine();
    if (!e.device().timestamps) {
      std::vector<float> a(4, 1.0f), c(4);
      const auto t = e.gemm(DataType::f32, 2, 2, 2, a.data(), a.data(), c.data());
      CHECK(t.gpu_ms.empty());
      CHECK_FALSE(t.gpu_timestamps);
      CHECK_THROWS_AS(t.median_gpu_ms(), Error);
      return;
    }
    const uint32_t small = 32, large = 256;
    std::vector<float> a(large * large, 0.5f), c(large * large);
    const auto t_small = e.gemm(DataType::f32, small, small, small, a.data(), a.data(), c.data(), {.repeat = 5});
    const auto t_large =
        e.gemm(DataType::f32, large, large, large, a.data(), a.data(), c.data(), {.repeat = 5, .warmup = 1});
    REQUIRE(t_small.gpu_ms.size() == 5);
    REQUIRE(t_large.gpu_ms.size() == 5);
    for (double ms : t_large.gpu_ms) {
      CHECK(ms > 0.0);
      CHECK(ms < 60'000.0);
    }
    // 512 times the arithmetic takes longer; generous so that scheduling noise cannot fail it.
    CHECK(t_large.median_gpu_ms() > t_small.median_gpu_ms());
    // The dispatches fit inside the host's submit-to-fence window.
    double sum = 0;
    for (double ms : t_large.gpu_ms) sum += ms;
    CHECK(sum <= t_large.submit_wait_ms * 1.05 + 0.5);
    // Host-memory products copy A and B in and C out, which takes measurable time (256 KiB each way).
    CHECK(t_large.upload_ms > 0.0);
    CHECK(t_large.download_ms > 0.0);
    CHECK(t_large.upload_ms < 60'000.0);
    CHECK(t_large.download_ms < 60'000.0);
    CHECK(c[0] == doctest::Approx(large * 0.25));
  }

  TEST_CASE("timestamps off: the product alone, no GPU times, and timestamps on again after it") {
    Engine& e = test::engine();
    const uint32_t n = 48;
    std::vector<float> a(n * n), b(n * n), c(n * n, -1.0f);
    for (uint32_t i = 0; i < n * n; ++i) a[i] = float(i % 7) - 3.0f, b[i] = float(i % 5) - 2.0f;
    GemmOptions off;
    off.timestamps = false;
    const auto t = e.gemm(DataType::f32, n, n, n, a.data(), b.data(), c.data(), off);
    CHECK(t.gpu_ms.empty());
    CHECK(t.gpu_timestamps == e.device().timestamps);  // what the device has, not what this call asked
    CHECK_THROWS_WITH_AS(t.median_gpu_ms(), doctest::Contains(e.device().timestamps ? "timestamps were off" : "no timestamps"),
                         Error);
    CHECK(t.submit_wait_ms > 0.0);
    for (uint32_t i = 0; i < n; i += 7) {  // integers: exact in f32
      for (uint32_t j = 0; j < n; j += 5) {
        double sum = 0;
        for (uint32_t k = 0; k < n; ++k) sum += double(a[i * n + k]) * b[k * n + j];
        CHECK(c[i * n + j] == float(sum));
      }
    }
    // The same call with timestamps (another cached plan) times again.
    const auto on = e.gemm(DataType::f32, n, n, n, a.data(), b.data(), c.data());
    CHECK(on.gpu_ms.size() == (e.device().timestamps ? 1u : 0u));
  }
}
