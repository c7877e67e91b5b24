// The two integer examples of the classic walkthroughs, exactly.
#include <doctest/doctest.h>

#include <vector>

#include "support.hpp"

using namespace vkgemm;

TEST_SUITE("walkthrough") {
  TEST_CASE("3x2 times 2x3 integers with the naive kernel") {
    const std::vector<int32_t> a = {1, 4, 2, 5, 3, 6};
    const std::vector<int32_t> b = {7, 8, 9, 10, 11, 12};
    const std::vector<int32_t> expected = {47, 52, 57, 64, 71, 78, 81, 90, 99};
    std::vector<int32_t> c(9, -1);
    test::engine().gemm(DataType::i32, 3, 3, 2, a.data(), b.data(), c.data(), {.kernel = Kernel::naive});
    CHECK(c == expected);
    std::vector<int32_t> cpu(9, -1);
    reference_gemm(DataType::i32, 3, 3, 2, a.data(), b.data(), cpu.data());
    CHECK(cpu == expected);
  }

  TEST_CASE("4x4 integers with the tiled kernel at tile size 2") {
    const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<int32_t> expected = {34, 44, 54, 64, 82, 108, 134, 160, 34, 44, 54, 64, 82, 108, 134, 160};
    std::vector<int32_t> c(16, -1);
    test::engine().gemm(DataType::i32, 4, 4, 4, a.data(), a.data(), c.data(), {.kernel = Kernel::tiled, .tile = 2});
    CHECK(c == expected);
  }

  TEST_CASE("float32 walkthrough product in [0, 30) matches the CPU") {
    auto rng = test::case_rng("walkthrough f32");
    for (const auto kernel : simt_kernels) {
      const auto result = test::check_product(DataType::f32, 96, 80, 112, {.kernel = kernel}, rng);
      INFO("seed ", test::run_seed(), ": ", result.detail);
      CHECK(result.passed);
    }
  }
}
