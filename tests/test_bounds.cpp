// The bounds themselves (reference.hpp): results summed the ways kernels sum pass, and wrong results fail
// at every k the kernels are used at, in particular where the worst-case bound says nothing (fp16 sums at
// k >= 1024). The "kernels" here are CPU simulations of fp16 and fp32 summation orders, so these run on any
// machine and fail a bound that cannot reject what it must.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "reference/tolerance.hpp"
#include "support.hpp"
#include "vkgemm/half.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

namespace {

float to_half_float(float x) { return half_to_float(float_to_half(x)); }

// Rounds a float to TF32 (10 fraction bits, to nearest even), as a tensor-core f32 path might.
float to_tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
  std::memcpy(&x, &u, 4);
  return x;
}

struct Inputs {
  uint32_t m, n, k;
  std::vector<uint16_t> a, b;  // fp16 bits, uniform in [-1, 1) rounded
};

Inputs random_inputs(uint32_t m, uint32_t n, uint32_t k, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Inputs in{m, n, k, std::vector<uint16_t>(uint64_t{m} * k), std::vector<uint16_t>(uint64_t{k} * n)};
  for (auto& x : in.a) x = float_to_half(d(rng));
  for (auto& x : in.b) x = float_to_half(d(rng));
  return in;
}

// How a simulated kernel sums one element: running sums updated once per `group` products
// (a tensor-core step sums its products exactly, then rounds into the accumulator), over `slices` split-K
// slices added at the end; and the mutations a wrong kernel would make.
struct Summation {
  uint32_t group = 1;
  uint32_t slices = 1;
  bool tf32_inputs = false;     // round each input to TF32 first
  bool drop_slice = false;      // lose the last slice's contribution
  uint32_t drop_step = 0;       // lose this many products from the middle of K (one K step of a kernel)
  bool flush = false;           // fp32 products and partial sums below 2^-126 flushed to zero (no subnormals)
};

// C = alpha * A B as fp16 bits, with fp16 running sums, summed as `how` says.
std::vector<uint16_t> simulate_f16(const Inputs& in, const Summation& how, float alpha = 1.0f) {
  std::vector<uint16_t> c(uint64_t{in.m} * in.n);
  const uint32_t slice_k = (in.k + how.slices - 1) / how.slices;
  const uint32_t drop_begin = in.k / 2, drop_end = drop_begin + how.drop_step;
  for (uint32_t i = 0; i < in.m; ++i)
    for (uint32_t j = 0; j < in.n; ++j) {
      float total = 0.0f;
      for (uint32_t s = 0; s < how.slices; ++s) {
        if (how.drop_slice && s == how.slices - 1) continue;
        float acc = 0.0f;  // an fp16 value
        const uint32_t end = std::min(in.k, (s + 1) * slice_k);
        for (uint32_t p0 = s * slice_k; p0 < end; p0 += how.group) {
          float step = 0.0f;  // exact: at most `group` products of fp16 values
          for (uint32_t p = p0; p < std::min(end, p0 + how.group); ++p) {
            if (p >= drop_begin && p < drop_end) continue;
            step += half_to_float(in.a[uint64_t{i} * in.k + p]) * half_to_float(in.b[uint64_t{p} * in.n + j]);
          }
          acc = to_half_float(acc + step);
        }
        total += acc;
      }
      c[uint64_t{i} * in.n + j] = float_to_half(alpha * total);
    }
  return c;
}

// With fp32 running sums (one FMA per product) and C f32, inputs optionally rounded to TF32 first.
std::vector<float> simulate_f32(const std::vector<float>& a, const std::vector<float>& b, uint32_t m, uint32_t n,
                                uint32_t k, const Summation& how) {
  std::vector<float> c(uint64_t{m} * n, 0.0f);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t p = 0; p < k; ++p) {
      const float x = how.tf32_inputs ? to_tf32(a[uint64_t{i} * k + p]) : a[uint64_t{i} * k + p];
      for (uint32_t j = 0; j < n; ++j) {
        const float y = how.tf32_inputs ? to_tf32(b[uint64_t{p} * n + j]) : b[uint64_t{p} * n + j];
        float& s = c[uint64_t{i} * n + j];
        if (how.flush) {
          const auto flushed = [](float v) { return std::fabs(v) < std::ldexp(1.0f, -126) ? 0.0f : v; };
          s = flushed(s + flushed(x * y));
        } else {
          s = std::fma(x, y, s);
        }
      }
    }
  return c;
}

// `count` f32 values uniform in [-1, 1) times 2^exponent.
std::vector<float> random_f32(uint64_t count, std::mt19937_64& rng, int exponent = 0) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& x : v) x = std::ldexp(d(rng), exponent);
  return v;
}

constexpr CompareOptions kF16Sums{.f16_accumulate = true, .random_inputs = true};

Comparison judge_plain(const Inputs& in, const std::vector<uint16_t>& c) {
  return compare_with_reference(DataType::f16, DataType::f16, in.m, in.n, in.k, in.a.data(), in.b.data(), c.data(),
                                kF16Sums);
}

// The same product through the full BLAS comparison (alpha = 2 takes it off the plain path).
Comparison judge_blas(const Inputs& in, const std::vector<uint16_t>& c) {
  GemmDesc d;
  d.type = DataType::f16;
  d.c_type = DataType::f16;
  d.m = in.m;
  d.n = in.n;
  d.k = in.k;
  d.alpha = 2.0;
  const std::vector<uint16_t> c0(c.size(), 0);
  return compare_with_reference(d, in.a.data(), in.b.data(), c0.data(), c.data(), kF16Sums);
}

}  // namespace

TEST_SUITE("bounds") {
  TEST_CASE("fp16 sums: every summation order a kernel uses passes, and wrong results fail, at k = 1024 to 14336") {
    auto rng = test::case_rng("bounds fp16");
    for (const uint32_t k : {1024u, 4096u, 14336u}) {
      const Inputs in = random_inputs(40, 48, k, rng);
      CAPTURE(k);
      // Correct kernels: fp16 FMA per product (SIMT), tensor-core steps of 8 and 16, split-K in 2 and 4.
      for (const Summation how : {Summation{.group = 1}, Summation{.group = 8}, Summation{.group = 16},
                                  Summation{.group = 16, .slices = 2}, Summation{.group = 16, .slices = 4}}) {
        CAPTURE(how.group);
        CAPTURE(how.slices);
        const Comparison plain = judge_plain(in, simulate_f16(in, how));
        CHECK_MESSAGE(plain.passed, plain.summary());
        const Comparison blas = judge_blas(in, simulate_f16(in, how, 2.0f));
        CHECK_MESSAGE(blas.passed, blas.summary());
      }
      // The worst-case bound alone passes an all-zero C from k = 1024 on: the model must not.
      const std::vector<uint16_t> zero(uint64_t{in.m} * in.n, 0);
      const Comparison worst_only = compare_with_reference(DataType::f16, DataType::f16, in.m, in.n, in.k, in.a.data(),
                                                           in.b.data(), zero.data(), {.f16_accumulate = true});
      CHECK_MESSAGE(worst_only.passed, "the premise: the worst case alone cannot reject zeros at k = ", k);
      CHECK_FALSE(judge_plain(in, zero).passed);
      CHECK_FALSE(judge_blas(in, zero).passed);
      // One split-K slice of 2 or 4 dropped; one K step of 32 (coopmat2's BK) or 16 dropped.
      for (const Summation wrong : {Summation{.group = 16, .slices = 2, .drop_slice = true},
                                    Summation{.group = 16, .slices = 4, .drop_slice = true},
                                    Summation{.group = 16, .drop_step = 32}, Summation{.group = 16, .drop_step = 16},
                                    Summation{.group = 1, .drop_step = 32}}) {
        CAPTURE(wrong.slices);
        CAPTURE(wrong.drop_step);
        const Comparison plain = judge_plain(in, simulate_f16(in, wrong));
        CHECK_MESSAGE(!plain.passed, plain.summary());
        const Comparison blas = judge_blas(in, simulate_f16(in, wrong, 2.0f));
        CHECK_MESSAGE(!blas.passed, blas.summary());
      }
    }
  }

  TEST_CASE("f32: fp32 sums pass, a path that rounds its inputs to TF32 fails") {
    auto rng = test::case_rng("bounds f32");
    for (const uint32_t k : {256u, 1024u, 4096u}) {
      const uint32_t m = 32, n = 40;
      const auto a = random_f32(uint64_t{m} * k, rng), b = random_f32(uint64_t{k} * n, rng);
      CAPTURE(k);
      const CompareOptions model{.random_inputs = true};
      const auto right = simulate_f32(a, b, m, n, k, {});
      const Comparison ok = compare_with_reference(DataType::f32, DataType::f32, m, n, k, a.data(), b.data(),
                                                   right.data(), model);
      CHECK_MESSAGE(ok.passed, ok.summary());
      const auto tf32 = simulate_f32(a, b, m, n, k, {.tf32_inputs = true});
      const Comparison worst_only =
          compare_with_reference(DataType::f32, DataType::f32, m, n, k, a.data(), b.data(), tf32.data());
      const Comparison caught =
          compare_with_reference(DataType::f32, DataType::f32, m, n, k, a.data(), b.data(), tf32.data(), model);
      CHECK_MESSAGE(!caught.passed, caught.summary(), " (worst case alone: ", worst_only.summary(), ")");
    }
  }

  // A device may flush fp32 results below 2^-126 (vkgemm's shaders do not ask to keep subnormals; NVIDIA's
  // driver does flush them): products that small, all flushed, pass; a result off by more than the flushing
  // allows fails. Mutation (shown once by hand): without the flushing allowance the flushed result fails.
  TEST_CASE("f32: results flushed below 2^-126 pass, a result off by more fails") {
    auto rng = test::case_rng("bounds f32 flushed");
    for (const uint32_t k : {1u, 16u, 1024u}) {
      const uint32_t m = 8, n = 12;
      // Products below 2^-126: subnormal, flushed to zero.
      const auto a = random_f32(uint64_t{m} * k, rng, -63), b = random_f32(uint64_t{k} * n, rng, -63);
      CAPTURE(k);
      auto c = simulate_f32(a, b, m, n, k, {.flush = true});
      const Comparison flushed =
          compare_with_reference(DataType::f32, DataType::f32, m, n, k, a.data(), b.data(), c.data());
      CHECK_MESSAGE(flushed.passed, flushed.summary());
      c[5] += std::ldexp(4.0f * static_cast<float>(k) + 4.0f, -126);  // past 2(k + 1) flushes of 2^-126
      const Comparison wrong =
          compare_with_reference(DataType::f32, DataType::f32, m, n, k, a.data(), b.data(), c.data());
      CHECK_MESSAGE(!wrong.passed, wrong.summary());
    }
  }

  TEST_CASE("the normwise model factor falls to 1/sqrt(3) as elements grow") {
    CHECK(detail::normwise_model_factor(1) > 2.0);
    CHECK(detail::normwise_model_factor(1u << 20) < 0.6);
    CHECK(detail::normwise_model_factor(1u << 20) > 1.0 / std::sqrt(3.0));
  }
}
