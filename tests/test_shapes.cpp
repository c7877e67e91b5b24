// Every kernel, type (f16: inputs f16, C f32) and tile size over shapes that cross each tile boundary (1, T-1, T, T+1), primes
// (7, 31, 67, 129) and skinny products (one of m, n, k equal to 1), with fresh random inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "support.hpp"
#include "vkgemm/tuning.hpp"

using namespace vkgemm;

namespace {

std::vector<uint32_t> sizes_around(uint32_t tile) {
  std::set<uint32_t> s = {1, 7, 31, 67, 129, tile, tile + 1};
  if (tile > 1) s.insert(tile - 1);
  return {s.begin(), s.end()};
}

// Every (m, n, k) with each dimension from its list: all boundary crossings in every combination.
void run_grid(DataType type, const GemmOptions& options, const std::vector<uint32_t>& ms,
              const std::vector<uint32_t>& ns, const std::vector<uint32_t>& ks, std::vector<uint32_t> skews = {3}) {
  if (type == DataType::f64 && !test::engine().device().float64) {
    test::skip(test::engine().device().name + " has no shaderFloat64");
    return;
  }
  try {
    test::engine().check_supported(type, options);
  } catch (const Error& e) {
    // A device that lacks what the kernel needs is a skip; any other refusal is a failure. (What CI's
    // device must support is asserted by the support suite, so a lost feature fails there.)
    if (e.code() != ErrorCode::unsupported_type && e.code() != ErrorCode::unsupported_config) throw;
    test::skip(e.what());
    return;
  }
  const std::string name =
      fmt::format("{} {} {} {}", to_string(type), to_string(options.kernel), options.tile, to_string(options.blocked));
  auto rng = test::case_rng(name);
  const test::GridSample sample = test::grid_sample(name);
  int failures = 0;
  uint64_t index = 0;
  for (uint32_t skew : skews)
    for (uint32_t m : ms)
      for (uint32_t n : ns)
        for (uint32_t k : ks) {
          if (!sample.takes(index++)) continue;
          const auto result = test::check_product(type, m, n, k, options, rng, skew);
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
        const auto dims = sizes_around(wg);
        run_grid(type, {.kernel = Kernel::naive, .tile = wg}, dims, dims, dims);
      }
    }
  }

  TEST_CASE("tiled kernel") {
    for (const auto type : all_data_types) {
      for (uint32_t tile : {8u, 16u, 32u}) {
        CAPTURE(to_string(type));
        CAPTURE(tile);
        const auto dims = sizes_around(tile);
        run_grid(type, {.kernel = Kernel::tiled, .tile = tile}, dims, dims, dims);
      }
    }
  }

  TEST_CASE("blocked kernel") {
    // Configurations that differ in every parameter; each checked around its own block edges, with the
    // matrices aligned (vec4 loads where the shape allows) and skewed (element-by-element loads).
    const char* configs[] = {"64x64x8 8x4 lanes 8 split 1", "128x128x8 8x8 lanes 8 split 1",
                             "64x64x16 4x4 lanes 4 split 1", "64x128x8 8x8 lanes 16 split 1",
                             "64x64x8 8x4 lanes 8 split 3"};
    for (const auto type : {DataType::f32, DataType::f64}) {
      for (const char* text : configs) {
        const BlockedConfig c = parse_blocked_config(text);
        CAPTURE(to_string(type));
        CAPTURE(std::string(text));
        const std::set<uint32_t> ms = {1, 7, c.bm - 1, c.bm, c.bm + 1, 67};
        const std::set<uint32_t> ns = {1, 5, c.bn - 1, c.bn, c.bn + 1, 31};
        const std::set<uint32_t> ks = {1, 7, c.bk - 1, c.bk, c.bk + 1, 2 * c.bk + 1, 129};
        run_grid(type, {.kernel = Kernel::blocked, .blocked = c}, {ms.begin(), ms.end()}, {ns.begin(), ns.end()},
                 {ks.begin(), ks.end()}, {0, 3});
      }
    }
  }

  TEST_CASE("auto kernel") {
    const std::vector<uint32_t> dims = {1, 17, 64, 130};
    for (const auto type : all_data_types) {
      CAPTURE(to_string(type));
      run_grid(type, {.kernel = Kernel::automatic}, dims, dims, {1, 8, 300}, {0, 3});
    }
  }

  TEST_CASE("blocked kernel's grouped block order over many block rows") {
    // 453 rows are 8 block rows of 64: groups of 3 leave a partial group of 2; group 1 is plain row order.
    auto rng = test::case_rng("grouped order");
    for (const char* text : {"64x64x8 8x4 group 3", "64x64x8 8x4 group 1", "64x64x8 8x4 group 16"}) {
      for (const auto [m, n, k] : {std::array<uint32_t, 3>{453, 200, 40}, {64 * 8, 64 * 3, 16}, {65, 700, 9}}) {
        for (uint32_t skew : {0u, 3u}) {
          const auto result = test::check_product(
              DataType::f32, m, n, k, {.kernel = Kernel::blocked, .blocked = parse_blocked_config(text)}, rng, skew);
          INFO("seed ", test::run_seed(), ": ", result.detail);
          CHECK(result.passed);
        }
      }
    }
  }

  TEST_CASE("blocked kernel's small-M configurations, as the tuner offers them") {
    // Short, wide products (127 x 4096 x 4096) need blocks of 16 or 32 rows to fill a large GPU. The tuner's
    // candidates must hold such blocks with 128 or 256 columns, and every one of them must compute right:
    // each candidate of 16 or 32 rows around its block edges (aligned and skewed), and split-K 2 and 4.
    std::vector<BlockedConfig> small;
    for (const auto& c : blocked_candidates(test::engine(), DataType::f32)) {
      if (c.bm < 64) small.push_back(c);
    }
    MESSAGE(small.size(), " small-M candidates on ", test::engine().device().name);
    const auto offered = [&](const char* text) {
      const BlockedConfig want = parse_blocked_config(text);
      return std::any_of(small.begin(), small.end(), [&](const BlockedConfig& c) {
        return c.bm == want.bm && c.bn == want.bn && c.bk == want.bk && c.tm == want.tm && c.tn == want.tn &&
               c.lanes_n == want.lanes_n;
      });
    };
    // What must be there, by the shared memory each needs for f32 (lavapipe has 32 KiB, NVIDIA 48 KiB).
    const std::pair<const char*, uint32_t> expected[] = {
        {"16x128x16 4x8 lanes 8", 18944},    {"32x128x16 4x8 lanes 8", 20992},   {"16x256x16 4x16 lanes 16", 35328},
        {"32x256x16 4x16 lanes 16", 37376}, {"32x128x32 4x8 lanes 8", 41984}};
    for (const auto& [text, shared] : expected) {
      const std::string config(text);  // CAPTURE captures: not a binding (clang 14)
      CAPTURE(config);
      if (shared <= test::engine().device().max_shared_memory) CHECK(offered(text));
    }
    auto rng = test::case_rng("small-M");
    std::vector<BlockedConfig> configs;  // each a pipeline of its own
    for (BlockedConfig c : small) {
      for (uint32_t split : {1u, 2u, 4u}) {
        if (split > 1 && c.lanes_n != 8) continue;  // split-K on one warp layout per tile shape
        c.split_k = split;
        configs.push_back(c);
      }
    }
    // The quick tier builds a few of the pipelines (each seconds on a cold shader cache), CI every one.
    const test::QuickSample quick = test::quick_sample("small-M");
    int failures = 0, products = 0, built = 0;
    for (size_t i = 0; i < configs.size(); ++i) {
      if (!quick.takes(i, configs.size())) continue;
      ++built;
      const BlockedConfig& c = configs[i];
      const uint32_t split = c.split_k;
      // Sampled per configuration: each one keeps at least a product in every sampled run.
      const test::GridSample sample = test::grid_sample("small-M " + to_string(c));
      uint64_t index = 0;
      const std::set<uint32_t> ms = {1, c.bm - 1, c.bm + 1, 127};
      const std::set<uint32_t> ns = {c.bn - 1, c.bn + 3};
      const uint32_t k = split > 1 ? 4 * c.bk * split + 5 : 2 * c.bk + 1;
      for (uint32_t m : ms)
        for (uint32_t n : ns)
          for (uint32_t skew : {0u, 3u}) {
            if (!sample.takes(index++)) continue;
            ++products;
            const auto r = test::check_product(DataType::f32, m, n, k, {.kernel = Kernel::blocked, .blocked = c},
                                               rng, skew);
            if (!r.passed && ++failures <= 5) FAIL_CHECK(to_string(c), ": seed ", test::run_seed(), ": ", r.detail);
          }
    }
    MESSAGE(products, " products checked on ", built, " of the ", configs.size(), " configurations");
    CHECK_MESSAGE(failures == 0, failures, " products failed (the first 5 are listed); seed ", test::run_seed());
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
