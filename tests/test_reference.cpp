// The judge itself: the reference is right on known products, and the comparison fails wrong results
// (one bad element, a NaN, an integer off by one) while passing rounding-level differences.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "vkgemm/reference.hpp"

using namespace vkgemm;

TEST_SUITE("reference") {
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
    CHECK(error_bound(DataType::f32, 1024) == doctest::Approx(2.0 * 1024 * std::ldexp(1.0, -24)));
    CHECK(error_bound(DataType::f64, 0) == doctest::Approx(2.0 * std::ldexp(1.0, -53)));
  }
}
