// The seeded differential test: random shapes, types, kernels and tile sizes against the CPU reference.
// VKGEMM_DIFFERENTIAL_CASES sets how many cases run (CI runs the default, 40; 1000 is the long run); the run's
// seed is printed at start (VKGEMM_TEST_SEED repeats it) and every failure names its case.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "support.hpp"

using namespace vkgemm;

namespace {

uint32_t case_count() {
  const char* env = std::getenv("VKGEMM_DIFFERENTIAL_CASES");
  if (!env || !*env) return 40;
  return static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
}

// Sizes: mostly small (fast on a CPU device), some near tile edges, a few long or wide ones.
uint32_t random_size(std::mt19937_64& rng) {
  const uint64_t pick = rng() % 10;
  if (pick < 5) return static_cast<uint32_t>(1 + rng() % 48);
  if (pick < 8) {
    const uint32_t edge = 8u << (rng() % 3);  // 8, 16 or 32, plus or minus one
    return edge + static_cast<uint32_t>(rng() % 3) - 1;
  }
  return static_cast<uint32_t>(64 + rng() % 200);
}

uint32_t random_tile(std::mt19937_64& rng) {
  static constexpr uint32_t tiles[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 24, 32, 64};
  return tiles[rng() % std::size(tiles)];
}

}  // namespace

TEST_SUITE("differential") {
  TEST_CASE("random shapes, types, kernels and tiles against the CPU reference") {
    Engine& e = test::engine();
    const uint32_t cases = case_count();
    auto rng = test::case_rng("differential");
    // Draws until `cases` products ran: about half the draws are combinations the device refuses, so a
    // fixed count of draws would leave how many run to the seed.
    const uint32_t max_draws = 10 * cases;
    uint32_t ran = 0, refused = 0, failed = 0, i = 0;
    for (; ran < cases && i < max_draws; ++i) {
      const DataType type = all_data_types[rng() % std::size(all_data_types)];
      const Kernel kernel = simt_kernels[rng() % std::size(simt_kernels)];
      GemmOptions options{.kernel = kernel, .tile = random_tile(rng)};
      const uint32_t m = random_size(rng), n = random_size(rng), k = random_size(rng);
      try {
        e.check_supported(type, options);
      } catch (const Error&) {
        ++refused;  // counted, not hidden: a device that refuses everything fails below
        continue;
      }
      const auto r = test::check_product(type, m, n, k, options, rng);
      ++ran;
      if (!r.passed) ++failed;
      CHECK_MESSAGE(r.passed, "case ", i, " of seed ", test::run_seed(), ": ", r.detail);
    }
    MESSAGE(i, " draws: ", ran, " ran, ", refused, " refused by the device (check_supported), ", failed,
            " failed; seed ", test::run_seed());
    CHECK_MESSAGE(ran == cases, "the device refused ", refused, " of ", i, " draws");  // one that refuses nearly all
  }
}
