// Every kernel, type (f16: inputs f16, C f32) and tile size over shapes that cross each tile boundary (1, T-1, T, T+1), primes
// (7, 31, 67, 129) and skinny products (one of m, n, k equal to 1), with fresh random inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "support.hpp"

using namespace vkgemm;

namespace {

std::vector<uint32_t> sizes_around(uint32_t tile) {
  std::set<uint32_t> s = {1, 7, 31, 67, 129, tile, tile + 1};
  if (tile > 1) s.insert(tile - 1);
  return {s.begin(), s.end()};
}

// Every (m, n, k) with each dimension from the list: all boundary crossings in every combination.
void run_grid(DataType type, const GemmOptions& options, const std::vector<uint32_t>& dims) {
  if (type == DataType::f64 && !test::engine().device().float64) {
    MESSAGE("skipped: ", test::engine().device().name, " has no shaderFloat64");
    return;
  }
  if (type == DataType::f16 && !(test::engine().device().float16 && test::engine().device().storage16)) {
    MESSAGE("skipped: ", test::engine().device().name, " lacks shaderFloat16 or storageBuffer16BitAccess");
    return;
  }
  auto rng = test::case_rng(fmt::format("{} {} {}", to_string(type), to_string(options.kernel), options.tile));
  int failures = 0;
  for (uint32_t m : dims)
    for (uint32_t n : dims)
      for (uint32_t k : dims) {
        const auto result = test::check_product(type, m, n, k, options, rng);
        if (!result.passed && ++failures <= 5) {
          FAIL_CHECK("seed ", test::run_seed(), ": ", result.detail);
        }
      }
  CHECK_MESSAGE(failures == 0, failures, " shapes failed (the first 5 are listed); seed ", test::run_seed());
}

}  // namespace

TEST_SUITE("shapes") {
  TEST_CASE("naive kernel") {
    for (const auto type : all_data_types) {
      for (uint32_t wg : {8u, 16u}) {
        CAPTURE(to_string(type));
        CAPTURE(wg);
        run_grid(type, {.kernel = Kernel::naive, .tile = wg}, sizes_around(wg));
      }
    }
  }

  TEST_CASE("tiled kernel") {
    for (const auto type : all_data_types) {
      for (uint32_t tile : {8u, 16u, 32u}) {
        CAPTURE(to_string(type));
        CAPTURE(tile);
        run_grid(type, {.kernel = Kernel::tiled, .tile = tile}, sizes_around(tile));
      }
    }
  }

  TEST_CASE("odd tile sizes and larger rectangles") {
    auto rng = test::case_rng("odd tiles");
    for (uint32_t tile : {1u, 2u, 3u, 5u, 12u}) {
      for (const auto [m, n, k] : {std::array<uint32_t, 3>{37, 5, 41}, {5, 37, 41}, {300, 17, 3}, {2, 2, 300}}) {
        const auto result = test::check_product(DataType::f32, m, n, k, {.kernel = Kernel::tiled, .tile = tile}, rng);
        INFO("seed ", test::run_seed(), ": ", result.detail);
        CHECK(result.passed);
      }
    }
  }
}
