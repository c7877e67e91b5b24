// The judge itself: the reference is right on known products, and the comparison fails wrong results
// (one bad element, a NaN, an integer off by one) while passing rounding-level differences.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/element_access.hpp"
#include "kernels/kernel_spec.hpp"
#include "kernels/spirv_table.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

TEST_SUITE("reference") {
  TEST_CASE("every element type of the table has what docs/architecture.md's steps give it") {
    // A type added to vkgemm/names.hpp's VKGEMM_DATA_TYPES without one of the steps that can be checked
    // here fails: its size, its name, the reference's element access, the tests' random inputs, its place
    // among the SIMT kernels' inputs and their shader variants (the C header's and the Python module's
    // copies: the names.drift test).
    std::mt19937_64 rng(test::run_seed());
    for (const DataType t : all_data_types) {
      CAPTURE(to_string(t));
      CHECK(element_size(t) > 0);
      CHECK(parse_data_type(to_string(t)) == t);
      CHECK(output_allowed(t, default_output_type(t)));
      CHECK((unit_roundoff(t) > 0) == !is_integer(t));  // the reference's rounding of a float type
      // Element access: values every type holds, stored and read back.
      std::vector<std::byte> one(element_size(t));
      for (const double v : {1.0, 2.0, !is_integer(t) ? -0.5 : t == DataType::u8 ? 200.0 : -3.0}) {
        detail::store_element(t, one.data(), 0, v);
        CHECK(detail::load_element(t, one.data(), 0) == v);
      }
      // Random inputs: its size, and values of both signs (not zeros) of its range.
      const auto values = test::random_elements(t, 64, rng);
      REQUIRE(values.size() == 64 * element_size(t));
      double lo = 0, hi = 0;
      for (uint64_t i = 0; i < 64; ++i) {
        const double v = detail::load_element(t, values.data(), i);
        lo = std::min(lo, v), hi = std::max(hi, v);
      }
      if (t == DataType::u8) {
        CHECK(hi > 127);  // read as the shaders widen it, 0 to 255
      } else {
        CHECK((lo < 0 && hi > 0));
      }
      // The portable kernels take every type, each from its own shader variant (shaders/CMakeLists.txt).
      for (const Kernel k : {Kernel::naive, Kernel::tiled, Kernel::gemv}) {
        CAPTURE(to_string(k));
        const auto inputs = kernels::find_spec(k)->inputs;
        CHECK(std::find(inputs.begin(), inputs.end(), t) != inputs.end());
        const std::string variant = fmt::format("{}_{}", to_string(k), to_string(t));
        bool compiled = false;
        for (const kernels::SpirvBlob& blob : kernels::spirv_table()) {
          const std::string name = blob.name;
          compiled |= name == variant || name.rfind(variant + "_", 0) == 0;
        }
        CHECK(compiled);
      }
    }
  }

  TEST_CASE("known products") {
    const std::vector<double> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
    std::vector<double> c(4);
    reference_gemm(DataType::f64, 2, 2, 2, a.data(), b.data(), c.data());
    CHECK(c == std::vector<double>{19, 22, 43, 50});
    const std::vector<int32_t> big = {0x7fffffff, 2};
    std::vector<int32_t> ci(1);
    reference_gemm(DataType::i32, 1, 1, 2, big.data(), std::vector<int32_t>{2, 1}.data(), ci.data());
    CHECK(ci[0] == static_cast<int32_t>(0xfffffffeu + 2u));  // wraps modulo 2^32 like the GPU
  }

  TEST_CASE("the comparison catches what it must and tolerates rounding") {
    const uint32_t m = 300, n = 300, k = 64;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> a(m * k), b(k * n), c(m * n);
    for (auto& v : a) v = d(rng);
    for (auto& v : b) v = d(rng);
    reference_gemm(DataType::f32, m, n, k, a.data(), b.data(), c.data());
    CHECK(compare_with_reference(DataType::f32, m, n, k, a.data(), b.data(), c.data()).passed);

    auto nudged = c;  // one ulp everywhere: rounding, must pass
    for (auto& v : nudged) v = std::nextafter(v, 2.0f);
    CHECK(compare_with_reference(DataType::f32, m, n, k, a.data(), b.data(), nudged.data()).passed);

    auto one_bad = c;  // a single element off by 1%: the normwise error alone would miss it
    one_bad[12345] *= 1.01f;
    const auto r = compare_with_reference(DataType::f32, m, n, k, a.data(), b.data(), one_bad.data());
    CHECK_FALSE(r.passed);
    CHECK(r.bad_elements == 1);
    CHECK(r.first_bad == 12345);

    auto nan = c;
    nan[0] = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(compare_with_reference(DataType::f32, m, n, k, a.data(), b.data(), nan.data()).passed);

    std::vector<int32_t> ai = {1, 2, 3, 4}, ci = {7, 10, 15, 22};
    CHECK(compare_with_reference(DataType::i32, 2, 2, 2, ai.data(), ai.data(), ci.data()).passed);
    ci[3] = 23;
    CHECK_FALSE(compare_with_reference(DataType::i32, 2, 2, 2, ai.data(), ai.data(), ci.data()).passed);
  }

  TEST_CASE("the stated bound") {
    // Written out, not re-derived: 2 * 1024 * 2^-24 = 2^-13, and k = 0 counts as 1: 2 * 2^-53 = 2^-52.
    CHECK(error_bound(DataType::f32, 1024) == 0.0001220703125);
    CHECK(error_bound(DataType::f64, 0) == 2.220446049250313080847263336181640625e-16);
    CHECK(error_bound(DataType::f16, DataType::f16, 4, true) == 0.00390625);             // 2 * 4 * 2^-11
    CHECK(error_bound(DataType::f16, DataType::f16, 1, false) == 0.00048840045928955078);  // 2 * 2^-24 + 2^-11
  }

  TEST_CASE("the BLAS reference: known values with op, ld, layout, alpha, beta and a broadcast batch") {
    // A = [[1, 2], [3, 4]] stored column-major with lda 3 (a gap element after each column), op T;
    // B = I broadcast to 2 entries; C0 entries [[1, 1], [1, 1]] and [[2, 2], [2, 2]]; alpha 2, beta -1.
    const std::vector<float> a = {1, 3, -99, 2, 4, -99}, b = {1, 0, 0, 1}, c0 = {1, 1, 1, 1, 2, 2, 2, 2};
    const GemmDesc d{.layout = Layout::col_major, .op_a = Op::t, .m = 2, .n = 2, .k = 2, .lda = 3, .alpha = 2.0,
                     .beta = -1.0, .batch = 2, .stride_a = 0, .stride_b = 0};
    std::vector<float> c(8);
    reference_gemm(d, a.data(), b.data(), c0.data(), c.data());
    // 2 A^T - C0, column-major: A^T = [[1, 3], [2, 4]] -> columns (1, 2), (3, 4).
    CHECK(c == std::vector<float>{1, 3, 5, 7, 0, 2, 4, 6});
    CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), c.data()).passed);
  }

  TEST_CASE("the BLAS reference agrees with the definition on each layout and op, with padded lds and a batch") {
    // Small integers, so every sum is exact in float and the check is equality. Each operand's element
    // (r, c) of batch entry t is written here from the definitions of ld, stride and layout, not through
    // the library's indexing; B is not symmetric, and each batch entry has its own operands.
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int> small(-4, 4);
    const int64_t m = 3, n = 5, k = 4;
    for (const Layout layout : {Layout::row_major, Layout::col_major})
      for (const Op op_a : {Op::n, Op::t})
        for (const Op op_b : {Op::n, Op::t}) {
          const bool row = layout == Layout::row_major;
          const int64_t a_rows = op_a == Op::n ? m : k, a_cols = op_a == Op::n ? k : m;
          const int64_t b_rows = op_b == Op::n ? k : n, b_cols = op_b == Op::n ? n : k;
          GemmDesc d{.layout = layout, .op_a = op_a, .op_b = op_b, .m = m, .n = n, .k = k,
                     .lda = (row ? a_cols : a_rows) + 1, .ldb = (row ? b_cols : b_rows) + 2, .ldc = (row ? n : m) + 3,
                     .alpha = 2.0, .beta = -1.0, .batch = 2};
          const auto at = [&](char which, int64_t ld, int64_t t, int64_t r, int64_t c) {
            return static_cast<size_t>(t * operand_extent(d, which).stride + (row ? r * ld + c : c * ld + r));
          };
          const auto fill = [&](char which) {
            std::vector<float> x(operand_extent(d, which).elements);
            for (float& v : x) v = static_cast<float>(small(rng));
            return x;
          };
          const std::vector<float> a = fill('A'), b = fill('B'), c0 = fill('C');
          std::vector<float> c = c0;
          reference_gemm(d, a.data(), b.data(), c0.data(), c.data());
          CAPTURE(row);
          CAPTURE(op_a == Op::t);
          CAPTURE(op_b == Op::t);
          for (int64_t t = 0; t < d.batch; ++t)
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                float sum = 0;
                for (int64_t p = 0; p < k; ++p) {
                  const float x = op_a == Op::n ? a[at('A', d.lda, t, i, p)] : a[at('A', d.lda, t, p, i)];
                  const float y = op_b == Op::n ? b[at('B', d.ldb, t, p, j)] : b[at('B', d.ldb, t, j, p)];
                  sum += x * y;
                }
                const size_t e = at('C', d.ldc, t, i, j);
                CHECK(c[e] == 2 * sum - c0[e]);
              }
        }
  }

  TEST_CASE("a tight call with alpha 1 and beta 0 in any layout and ops is judged as the plain product") {
    // compare_with_reference rearranges such a call into the row-major plain product for the fast
    // reference: a right result passes, and one wrong element fails, named where it lives in the caller's C.
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (const Layout layout : {Layout::row_major, Layout::col_major})
      for (const Op op_a : {Op::n, Op::t})
        for (const Op op_b : {Op::n, Op::t}) {
          const GemmDesc d{.layout = layout, .op_a = op_a, .op_b = op_b, .m = 9, .n = 7, .k = 5};
          std::vector<float> a(45), b(35), c0(63, 0.0f), c(63);
          for (float& v : a) v = u(rng);
          for (float& v : b) v = u(rng);
          reference_gemm(d, a.data(), b.data(), c0.data(), c.data());
          CAPTURE(layout == Layout::row_major);
          CAPTURE(op_a == Op::t);
          CAPTURE(op_b == Op::t);
          CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), c.data()).passed);
          const uint64_t wrong = layout == Layout::row_major ? 2 * 7 + 5 : 5 * 9 + 2;  // element (2, 5)
          c[wrong] += 0.5f;
          const Comparison bad = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data());
          CHECK_FALSE(bad.passed);
          CHECK(bad.bad_elements == 1);
          CHECK(bad.first_bad == wrong);
        }
  }

  TEST_CASE("the BLAS comparison fails a wrong element, a NaN, a changed gap, a C read when beta = 0") {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    GemmDesc d{.m = 20, .n = 30, .k = 40, .ldc = 33, .alpha = 1.5, .beta = 0.5, .batch = 2};
    const auto span = [&](char w) { return operand_extent(d, w).elements; };
    std::vector<float> a(span('A')), b(span('B')), c0(span('C'));
    for (auto* v : {&a, &b, &c0})
      for (float& x : *v) x = u(rng);
    std::vector<float> good(c0.size());
    reference_gemm(d, a.data(), b.data(), c0.data(), good.data());
    CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), good.data()).passed);
    auto wrong = good;
    wrong[33 * 7 + 5] += 1e-3f;  // a described element of entry 0
    CHECK_FALSE(compare_with_reference(d, a.data(), b.data(), c0.data(), wrong.data()).passed);
    wrong = good;
    wrong[wrong.size() - 1] = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(compare_with_reference(d, a.data(), b.data(), c0.data(), wrong.data()).passed);
    wrong = good;
    wrong[31] = 12345.0f;  // a gap of ldc: must stay as C0 had it
    const auto gap = compare_with_reference(d, a.data(), b.data(), c0.data(), wrong.data());
    CHECK_FALSE(gap.passed);
    CHECK(gap.first_bad == 31);
    // beta = 0: a result that read C0 (as if beta were 0.5) fails.
    d.beta = 0.0;
    CHECK_FALSE(compare_with_reference(d, a.data(), b.data(), c0.data(), good.data()).passed);
    // Rounding-level differences pass: one ulp on every described element (20 rows of 30 in each entry).
    d.beta = 0.5;
    auto ulp = good;
    for (size_t t = 0; t < 2; ++t)
      for (size_t r = 0; r < 20; ++r)
        for (size_t col = 0; col < 30; ++col) {
          float& x = ulp[t * 660 + r * 33 + col];
          x = std::nextafter(x, 2.0f);
        }
    CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), ulp.data()).passed);
  }
  TEST_CASE("non-finite inputs: a result whose Inf and NaN elements match the reference's passes") {
    // A holds an Inf in row 1 and a NaN in row 2; B an -Inf in column 3: those rows and column of C are
    // Inf or NaN in any order of summation. A result with the same non-finite elements and rounding-level
    // finite ones passes, on the plain path and on the BLAS path (alpha 1.5, a batch of 2); an element that
    // is finite where the reference is NaN, or an Inf of the other sign, fails.
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (const bool blas : {false, true}) {
      CAPTURE(blas);
      GemmDesc d{.m = 6, .n = 5, .k = 4};
      if (blas) d.alpha = 1.5, d.batch = 2;
      const auto span = [&](char w) { return operand_extent(d, w).elements; };
      std::mt19937_64 rng(3);
      std::uniform_real_distribution<float> u(0.5f, 1.0f);
      std::vector<float> a(span('A')), b(span('B')), c0(span('C'), 0.0f), ref(span('C'));
      for (auto* v : {&a, &b})
        for (float& x : *v) x = u(rng);
      a[1 * 4 + 2] = inf;
      a[2 * 4 + 0] = nan;
      b[1 * 5 + 3] = -inf;
      reference_gemm(d, a.data(), b.data(), c0.data(), ref.data());
      CHECK(std::isinf(ref[1 * 5 + 0]));
      CHECK(std::isnan(ref[2 * 5 + 0]));
      CHECK(std::isnan(ref[1 * 5 + 3]));  // Inf times -Inf plus ... : one NaN of both
      const auto judge = [&](const std::vector<float>& c) {
        return compare_with_reference(d, a.data(), b.data(), c0.data(), c.data());
      };
      auto result = ref;
      for (float& x : result)
        if (std::isfinite(x)) x = std::nextafter(x, 2.0f);
      const Comparison ok = judge(result);
      INFO(ok.summary());
      CHECK(ok.passed);
      CHECK(ok.bad_elements == 0);
      CHECK(std::isfinite(ok.normwise_error));
      auto finite_for_nan = result;
      finite_for_nan[2 * 5 + 1] = 1.0f;
      CHECK_FALSE(judge(finite_for_nan).passed);
      auto other_sign = result;
      other_sign[1 * 5 + 0] = -other_sign[1 * 5 + 0];
      const Comparison bad = judge(other_sign);
      CHECK_FALSE(bad.passed);
      CHECK(bad.first_bad == 5);
      auto wrong_finite = result;  // a finite element still judged by its bound
      wrong_finite[0] += 0.01f;
      CHECK_FALSE(judge(wrong_finite).passed);
    }
  }
}
