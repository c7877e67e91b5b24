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
}
