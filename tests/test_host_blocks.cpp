// Host-memory products past what the device allocates at once (engine/host_blocks.hpp,
// docs/design/host-copies.md "Blocks"): the rule that cuts them into blocks of C, each block's operands where
// the whole product's are (every element of every layout and op, by brute force), and products cut into
// blocks on lavapipe under a lowered allocation limit (VKGEMM_TEST_MAX_ALLOCATION): every layout and op pair,
// gaps, beta, f64, inputs unchanged, C's gaps and guards untouched; what cannot be cut so is still refused.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/host_blocks.hpp"
#include "guarded.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

namespace {

const char* name(Layout l) { return l == Layout::row_major ? "row-major" : "column-major"; }
const char* name(Op op) { return op == Op::n ? "n" : "t"; }

// Where element (r, c) of op(X) (X 'A' or 'B') or of C lies in the storage `d` describes, in elements.
uint64_t at(const GemmDesc& d, char which, uint64_t r, uint64_t c) {
  const bool row_major = d.layout == Layout::row_major;
  const uint64_t ld = uint64_t(operand_extent(d, which).ld);
  const bool turned = (which == 'A' && d.op_a == Op::t) || (which == 'B' && d.op_b == Op::t);
  const bool row_lines = row_major != turned;  // op(X)'s rows are the storage's lines
  return row_lines ? r * ld + c : c * ld + r;
}

// The fits predicate of a device that allocates at most `limit` elements at once.
auto fits_in(uint64_t limit) {
  return [limit](const GemmDesc& d) {
    for (const char which : {'A', 'B', 'C'}) {
      if (operand_extent(d, which).elements > limit) return false;
    }
    return true;
  };
}

// An engine (validation on) whose device allocates at most `bytes` at once.
std::unique_ptr<Engine> engine_allocating(uint64_t bytes) {
  setenv("VKGEMM_TEST_MAX_ALLOCATION", std::to_string(bytes).c_str(), 1);
  auto e = test::make_engine();
  unsetenv("VKGEMM_TEST_MAX_ALLOCATION");
  return e;
}

constexpr uint64_t kLimit = 96 << 10;  // bytes: the products below need 2 to 12 blocks

}  // namespace

TEST_SUITE("host blocks") {
  TEST_CASE("the rule: the line axis of the largest operand, whole tiles, and what it does not cut") {
    GemmDesc d;
    d.type = DataType::f64;
    d.m = d.n = d.k = 24576;  // a ScaLAPACK rank's 4.8 GB blocks against the H200's 4.29 GB at once
    const auto cut = detail::block_cut(d, true, fits_in(4292870144ull / 8));
    REQUIRE(cut.has_value());
    // Row-major: A's lines are its rows (M), B's its rows (K), C's its rows (M).
    CHECK(cut->row_blocks == 2);
    CHECK(cut->rows == 12288);
    CHECK(cut->k_blocks == 2);
    CHECK(cut->depth == 12288);
    CHECK(cut->col_blocks == 1);
    CHECK_FALSE(detail::block_cut(d, false, fits_in(4292870144ull / 8)).has_value());  // K cut, run twice
    d.layout = Layout::col_major;  // column-major: A's lines are K, B's and C's N
    const auto col = detail::block_cut(d, true, fits_in(4292870144ull / 8));
    REQUIRE(col.has_value());
    CHECK(col->row_blocks == 1);
    CHECK(col->k_blocks == 2);
    CHECK(col->col_blocks == 2);
    d.layout = Layout::row_major;
    const auto whole = detail::block_cut(d, true, fits_in(~0ull));
    REQUIRE(whole.has_value());
    CHECK(whole->row_blocks * whole->col_blocks * whole->k_blocks == 1);
    d.m = 1000, d.n = 100, d.k = 10;
    const auto tiles = detail::block_cut(d, false, fits_in(60000));
    REQUIRE(tiles.has_value());
    CHECK(tiles->rows == 512);  // 1000 rows in 2 blocks: 512, whole tiles, and 488
    CHECK(tiles->row_blocks == 2);
    CHECK(tiles->k_blocks == 1);
    CHECK_FALSE(detail::block_cut(d, false, fits_in(999)).has_value());  // B, 10 x 100, would need K cut
    d.n = 300;
    GemmDesc refused = d;
    refused.batch = 2;
    CHECK_FALSE(detail::block_cut(refused, true, fits_in(2600)).has_value());
    refused = d;
    refused.epilogue.bias = BiasAxis::per_row;
    CHECK_FALSE(detail::block_cut(refused, true, fits_in(2600)).has_value());
    refused = d;
    refused.alpha = 0.0;  // C = beta C: nothing read, nothing to cut
    CHECK_FALSE(detail::block_cut(refused, true, fits_in(2600)).has_value());
    CHECK_FALSE(detail::block_cut(d, true, fits_in(299)).has_value());  // one row of C is 300 elements
    GemmDesc gaps;  // rows 2^14 apart, a row a block: 2^17 blocks, past the most a product is cut into
    gaps.m = 1 << 17, gaps.n = 4, gaps.k = 4, gaps.lda = 1 << 14;
    CHECK_FALSE(detail::block_cut(gaps, true, fits_in(1 << 14)).has_value());
    gaps.m = 1 << 10;  // 1024 rows: 1024 blocks of one row each, within the most
    const auto rows = detail::block_cut(gaps, true, fits_in(1 << 14));
    REQUIRE(rows.has_value());
    CHECK(rows->row_blocks == 1024);
  }

  TEST_CASE("each block's operands are the whole product's, every element, in every layout and op") {
    for (const Layout layout : {Layout::row_major, Layout::col_major}) {
      for (const Op op_a : {Op::n, Op::t}) {
        for (const Op op_b : {Op::n, Op::t}) {
          GemmDesc d;
          d.layout = layout, d.op_a = op_a, d.op_b = op_b;
          d.m = 23, d.n = 19, d.k = 17;
          d.lda = 29, d.ldb = 31, d.ldc = 37;
          d.beta = 0.5;
          INFO(fmt::format("{} op_a {} op_b {}", name(layout), name(op_a), name(op_b)));
          const auto cut = detail::block_cut(d, true, fits_in(150));
          REQUIRE(cut.has_value());
          CHECK(cut->row_blocks * cut->col_blocks * cut->k_blocks > 2);
          std::vector<int> seen(size_t(d.m * d.n * d.k), 0);  // each (i, j, k) term summed once
          for (uint64_t i = 0; i < cut->row_blocks; ++i) {
            for (uint64_t j = 0; j < cut->col_blocks; ++j) {
              for (uint64_t l = 0; l < cut->k_blocks; ++l) {
                const detail::Block b = detail::block_of(d, *cut, i, j, l);
                CHECK(fits_in(150)(b.desc));
                CHECK(b.desc.beta == (l == 0 ? 0.5 : 1.0));
                const uint64_t m0 = i * cut->rows, n0 = j * cut->cols, k0 = l * cut->depth;
                for (uint64_t r = 0; r < uint64_t(b.desc.m); ++r) {
                  for (uint64_t c = 0; c < uint64_t(b.desc.n); ++c) {
                    CHECK(b.c + at(b.desc, 'C', r, c) == at(d, 'C', m0 + r, n0 + c));
                    const uint64_t term = ((m0 + r) * uint64_t(d.n) + n0 + c) * uint64_t(d.k) + k0;
                    for (uint64_t k = 0; k < uint64_t(b.desc.k); ++k) ++seen[term + k];
                  }
                  for (uint64_t k = 0; k < uint64_t(b.desc.k); ++k) {
                    CHECK(b.a + at(b.desc, 'A', r, k) == at(d, 'A', m0 + r, k0 + k));
                  }
                }
                for (uint64_t c = 0; c < uint64_t(b.desc.n); ++c) {
                  for (uint64_t k = 0; k < uint64_t(b.desc.k); ++k) {
                    CHECK(b.b + at(b.desc, 'B', k, c) == at(d, 'B', k0 + k, n0 + c));
                  }
                }
              }
            }
          }
          for (const int s : seen) CHECK(s == 1);
        }
      }
    }
  }

  TEST_CASE("products past the allocation limit run in blocks: every layout and op pair, gaps, beta, C's gaps unchanged") {
    auto rng = test::case_rng(test::current_case_name());
    auto e = engine_allocating(kLimit);
    CHECK(e->device().max_allocation_size == kLimit);
    // A, B and C each past 96 KiB: K cut where A's or B's lines are K.
    const GemmDesc shape{.m = 173, .n = 151, .k = 160, .lda = 181, .ldb = 179, .ldc = 181};
    test::each_layout_op_beta(shape, [&](const GemmDesc& d) {
      const test::GuardedHostRun run = test::guarded_host_gemm(*e, d, rng);
      CHECK_MESSAGE(run.timing.config.find("blocks of") != std::string::npos, run.timing.config);
      CHECK(run.a_unchanged);
      CHECK(run.b_unchanged);
      CHECK(run.guards_intact[0]);
      CHECK(run.guards_intact[1]);
      CHECK(run.guards_intact[2]);
      const Comparison& r = run.result;  // C's gaps included: they must hold C's values
      CHECK_MESSAGE(r.passed, fmt::format("{} elements off, the first at {}", r.bad_elements, r.first_bad));
    });
  }

  TEST_CASE("in blocks: f64 with panels inside each block; what cannot be cut is refused as before") {
    auto rng = test::case_rng(test::current_case_name());
    auto e = engine_allocating(kLimit);
    {
      GemmDesc d;
      d.type = DataType::f64;
      d.m = 90, d.n = 70, d.k = 200;  // A 144 KB, B 112 KB: both cut
      std::vector<double> a(90 * 200), b(200 * 70), c(90 * 70, NAN);
      for (auto& x : a) x = double(test::random_floats(1, rng)[0]);
      for (auto& x : b) x = double(test::random_floats(1, rng)[0]) / 3.0;
      const GemmTiming t = e->gemm(d, a.data(), b.data(), c.data());
      CHECK_MESSAGE(t.config.find("blocks of") != std::string::npos, t.config);
      const Comparison r = compare_with_reference(d, a.data(), b.data(), nullptr, c.data());
      CHECK_MESSAGE(r.passed, fmt::format("f64: {} elements off, the first at {}", r.bad_elements, r.first_bad));
    }
    {  // check_fits refuses what is past the limit; check_fits_host passes what gemm on host memory cuts
      GemmDesc d;
      d.m = 200, d.n = 150, d.k = 200;  // B, 120 KB, past the limit along its lines, K
      CHECK_THROWS_AS(e->check_fits(d), Error);
      CHECK_NOTHROW(e->check_fits_host(d));
      GemmOptions timed;
      timed.repeat = 3;  // B's lines are K: a K cut, which a repeated run would add to C again
      CHECK_THROWS_AS(e->check_fits_host(d, timed), Error);
      d.epilogue.bias = BiasAxis::per_row;
      CHECK_THROWS_AS(e->check_fits_host(d), Error);
    }
    {  // a per-row bias is a vector along the cut: refused, naming the limit, C untouched
      GemmDesc d;
      d.m = 200, d.n = 150, d.k = 150;
      d.epilogue.bias = BiasAxis::per_row;
      const auto a = test::random_floats(200 * 150, rng), b = test::random_floats(150 * 150, rng);
      const auto bias = test::random_floats(200, rng);
      std::vector<float> c(200 * 150, 5.0f);
      try {
        e->gemm(d, a.data(), b.data(), c.data(), GemmOptions{}, bias.data());
        FAIL("a product with a bias past the allocation limit ran");
      } catch (const Error& err) {
        CHECK(err.code() == ErrorCode::too_large);
        CHECK(std::string(err.what()).find("maxMemoryAllocationSize") != std::string::npos);
      }
      for (const float x : c) REQUIRE(x == 5.0f);
    }
  }
}
