// The sampled check (reference.hpp, check_sampled): right results pass for every type, op, layout, batch
// and scalar; each of the wrong results a kernel can make fails it with witnesses far fewer than C's
// elements: one wrong element anywhere (its row's sum), an edge tile off by less than the row sums see
// (its witness), a split-K slice lost, a batch entry swapped, alpha applied twice, beta ignored, an operand
// read with the wrong op, an integer off by one.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/element_access.hpp"
#include "vkgemm/blas.hpp"
#include "vkgemm/half.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

namespace {

// A call's operands, random in the type's range (uniform(-1, 1) for floats; small integers), C0 too.
struct Call {
  GemmDesc d;
  std::vector<std::byte> a, b, c0;
  uint64_t seed = 0;
};

std::vector<std::byte> random_matrix(DataType type, uint64_t count, std::mt19937_64& rng) {
  std::vector<std::byte> out(count * element_size(type));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (uint64_t i = 0; i < count; ++i) {
    const double v = is_integer(type) ? std::floor(u(rng) * 100.0) : u(rng);
    detail::store_element(type, out.data(), i, type == DataType::u8 ? std::fabs(v) : v);
  }
  return out;
}

Call make_call(const GemmDesc& d, uint64_t seed) {
  Call c{d, {}, {}, {}, seed};
  std::mt19937_64 rng(seed);
  c.a = random_matrix(d.type, operand_extent(d, 'A').elements, rng);
  c.b = random_matrix(d.type, operand_extent(d, 'B').elements, rng);
  c.c0 = random_matrix(output_type(d), operand_extent(d, 'C').elements, rng);
  return c;
}

// What a right kernel writes: the product summed in the precision a GPU sums it (fp32 for f32 and the
// 16-bit inputs, double for f64, fp16 with fp16 sums), in K order, then rounded to C's type; integers exact.
// Computed by the reference of a call whose type sums as the GPU does, where one exists; else the
// reference rounded and nudged one ulp of C's type (a rounding-level difference).
std::vector<std::byte> right_result(const Call& c) {
  std::vector<std::byte> out(c.c0.size());
  reference_gemm(c.d, c.a.data(), c.b.data(), c.c0.data(), out.data());
  const DataType t = output_type(c.d);
  if (is_integer(t)) return out;
  const uint64_t count = operand_extent(c.d, 'C').elements;
  for (uint64_t i = 0; i < count; i += 3) {  // every third element one ulp up: the errors have structure too
    const double v = detail::load_element(t, out.data(), i), c0 = detail::load_element(t, c.c0.data(), i);
    if (v == c0 || !std::isfinite(v)) continue;  // a gap of the span, left as it was; an infinity
    if (t == DataType::f32) detail::store_element(t, out.data(), i, std::nextafter(float(v), 2.0f));
    if (t == DataType::f64) detail::store_element(t, out.data(), i, std::nextafter(v, 2.0));
  }
  return out;
}

Comparison sampled(const Call& c, const std::vector<std::byte>& result, const CompareOptions& options = {},
                   uint64_t budget = 1u << 16) {
  SampleOptions s;
  s.seed = c.seed ^ 0x5eed;
  s.tile_m = s.tile_n = 32;
  s.budget = budget;
  return check_sampled(c.d, c.a.data(), c.b.data(), c.c0.data(), result.data(), options, s);
}

GemmDesc desc(DataType type, int64_t m, int64_t n, int64_t k) {
  GemmDesc d;
  d.type = type;
  d.m = m, d.n = n, d.k = k;
  return d;
}

void add(std::vector<std::byte>& c, DataType t, uint64_t i, double delta) {
  detail::store_element(t, c.data(), i, detail::load_element(t, c.data(), i) + delta);
}

}  // namespace

TEST_SUITE("sampled_check") {
  TEST_CASE("right results pass: every type, op, layout, batch, alpha and beta") {
    uint64_t seed = 11;
    for (const DataType type : {DataType::f32, DataType::f64, DataType::f16, DataType::bf16, DataType::i8, DataType::u8,
                                DataType::i32}) {
      for (const int ops : {0, 1, 2, 3}) {
        GemmDesc d = desc(type, 70, 45, 33);
        d.op_a = ops & 1 ? Op::t : Op::n;
        d.op_b = ops & 2 ? Op::t : Op::n;
        d.layout = ops == 1 ? Layout::col_major : Layout::row_major;
        d.batch = ops == 2 ? 3 : 1;
        d.ldc = ops == 3 ? 50 : 0;  // gaps in C's span
        d.alpha = is_integer(type) ? 3.0 : 1.5;
        d.beta = ops % 2 ? (is_integer(type) ? -2.0 : 0.25) : 0.0;
        const Call c = make_call(d, ++seed);
        const std::string type_name(to_string(type));
        CAPTURE(type_name);
        CAPTURE(ops);
        CAPTURE(c.seed);
        const Comparison r = sampled(c, right_result(c), {.random_inputs = true});
        CHECK_MESSAGE(r.passed, r.summary());
        REQUIRE(r.sampled);
        CHECK(r.sampled->witnesses > 0);
        CHECK(r.sampled->rows_unjudged == 0);
      }
    }
    for (const DataType out : {DataType::f32, DataType::f16}) {  // fp16 inputs, either C
      GemmDesc d = desc(DataType::f16, 64, 64, 200);
      d.c_type = out;
      const Call c = make_call(d, ++seed);
      const Comparison r = sampled(c, right_result(c), {.random_inputs = true});
      CHECK_MESSAGE(r.passed, r.summary());
    }
  }

  TEST_CASE("fp16 sums: a result summed in fp16 passes; a lost K half fails") {
    GemmDesc d = desc(DataType::f16, 96, 80, 2048);
    d.c_type = DataType::f16;
    const Call c = make_call(d, 301);
    std::vector<std::byte> result(c.c0.size());
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        float s = 0.0f;  // each partial sum rounded to fp16, as fp16 accumulators do
        for (int64_t p = 0; p < d.k; ++p) {
          const float x = half_to_float(reinterpret_cast<const uint16_t*>(c.a.data())[i * d.k + p]);
          const float y = half_to_float(reinterpret_cast<const uint16_t*>(c.b.data())[p * d.n + j]);
          s = half_to_float(float_to_half(s + x * y));
        }
        reinterpret_cast<uint16_t*>(result.data())[i * d.n + j] = float_to_half(s);
      }
    const CompareOptions fp16_sums{.f16_accumulate = true, .random_inputs = true};
    CHECK_MESSAGE(sampled(c, result, fp16_sums).passed, sampled(c, result, fp16_sums).summary());
    GemmDesc half = d;
    half.k = d.k / 2, half.lda = d.k;  // the first half of K only
    std::vector<std::byte> lost(c.c0.size());
    reference_gemm(half, c.a.data(), c.b.data(), c.c0.data(), lost.data());
    CHECK_FALSE(sampled(c, lost, fp16_sums).passed);
  }

  TEST_CASE("one wrong element anywhere fails its row's sum; one of any size where a witness stands") {
    const Call c = make_call(desc(DataType::f32, 384, 320, 256), 21);
    const std::vector<std::byte> right = right_result(c);
    const Comparison base = sampled(c, right);
    REQUIRE(base.passed);
    REQUIRE(base.sampled->witnesses * 10 < base.sampled->elements);  // far fewer than C's elements
    std::mt19937_64 rng(c.seed);
    for (int trial = 0; trial < 20; ++trial) {  // anywhere: witness or not
      const uint64_t i = rng() % base.sampled->elements;
      auto wrong = right;
      add(wrong, DataType::f32, i, 1.01 * base.sampled->row_sum_catch);
      const Comparison r = sampled(c, wrong);
      CHECK_FALSE(r.passed);
      CHECK(r.sampled->bad_rows == 1);
      CHECK(r.sampled->first_bad_row == i - i % 320);
      auto nan = right;
      reinterpret_cast<float*>(nan.data())[i] = std::numeric_limits<float>::quiet_NaN();  // a lost store (poison)
      CHECK_FALSE(sampled(c, nan).passed);
    }
  }

  TEST_CASE("an edge tile off by less than the row sums see fails at its witness") {
    const Call c = make_call(desc(DataType::f32, 300, 270, 256), 31);
    const std::vector<std::byte> right = right_result(c);
    const Comparison base = sampled(c, right, {}, 1u << 17);  // the cover of 32 x 32 tiles and a few more
    REQUIRE(base.passed);
    REQUIRE(base.sampled->tile_m == 32);
    REQUIRE(base.sampled->tile_n == 32);
    auto wrong = right;  // the last 32 x 32 tile (rows 256.., columns 256..: a partial one) off by 1e-2
    for (int64_t i = 256; i < 288 && i < 300; ++i)
      for (int64_t j = 256; j < 270; ++j) add(wrong, DataType::f32, uint64_t(i * 270 + j), 1e-2);
    REQUIRE(1e-2 < base.sampled->row_sum_catch / 4);  // too small for the sums: the witness must catch it
    const Comparison r = sampled(c, wrong, {}, 1u << 17);
    CHECK_FALSE(r.passed);
    CHECK(r.bad_elements >= 1);
    std::mt19937_64 rng(c.seed);
    for (uint64_t seed = 1; seed <= 30; ++seed) {  // any 32 x 32 tile, wherever the witnesses fall
      auto block = right;
      const int64_t i0 = int64_t(rng() % (300 - 32)), j0 = int64_t(rng() % (270 - 32));
      for (int64_t i = i0; i < i0 + 32; ++i)
        for (int64_t j = j0; j < j0 + 32; ++j) add(block, DataType::f32, uint64_t(i * 270 + j), 1e-2);
      SampleOptions s{seed, 32, 32, 1u << 17, 2};
      CHECK_FALSE(check_sampled(c.d, c.a.data(), c.b.data(), c.c0.data(), block.data(), {}, s).passed);
      CHECK_FALSE(check_sampled(c.d, c.a.data(), c.b.data(), c.c0.data(), wrong.data(), {}, s).passed);
    }
  }

  TEST_CASE("a split-K slice lost, a batch entry swapped, alpha twice, beta ignored, the wrong op") {
    GemmDesc d = desc(DataType::f32, 256, 256, 256);
    d.batch = 3, d.alpha = 1.5, d.beta = 0.5;
    const Call c = make_call(d, 41);
    const std::vector<std::byte> right = right_result(c);
    REQUIRE(sampled(c, right).passed);
    const auto computed = [&](GemmDesc x) {
      std::vector<std::byte> out(c.c0.size());
      reference_gemm(x, c.a.data(), c.b.data(), c.c0.data(), out.data());
      return out;
    };
    GemmDesc slice = d;  // the last quarter of K lost
    slice.k = 192, slice.lda = 256, slice.stride_a = 256 * 256, slice.stride_b = 256 * 256;
    CHECK_FALSE(sampled(c, computed(slice)).passed);
    auto swapped = right;  // entries 1 and 2 of C exchanged
    const size_t entry = 256 * 256 * sizeof(float);
    std::memcpy(swapped.data() + entry, right.data() + 2 * entry, entry);
    std::memcpy(swapped.data() + 2 * entry, right.data() + entry, entry);
    CHECK_FALSE(sampled(c, swapped).passed);
    GemmDesc twice = d;
    twice.alpha = d.alpha * d.alpha;
    CHECK_FALSE(sampled(c, computed(twice)).passed);
    GemmDesc no_beta = d;
    no_beta.beta = 0.0;
    CHECK_FALSE(sampled(c, computed(no_beta)).passed);
    GemmDesc wrong_op = d;  // A read untransposed where the call says transposed (square: same extents)
    Call transposed = c;
    transposed.d.op_a = Op::t;
    CHECK_FALSE(sampled(transposed, computed(wrong_op)).passed);
  }

  TEST_CASE("integers: one element off by one fails its row; exact otherwise") {
    for (const DataType type : {DataType::i8, DataType::u8, DataType::i32}) {
      GemmDesc d = desc(type, 200, 150, 77);
      d.alpha = 3.0, d.beta = -1.0;
      const Call c = make_call(d, 51);
      const auto right = right_result(c);
      REQUIRE(sampled(c, right).passed);
      std::mt19937_64 rng(5);
      for (int trial = 0; trial < 10; ++trial) {
        auto wrong = right;
        const uint64_t i = rng() % (200 * 150);
        reinterpret_cast<int32_t*>(wrong.data())[i] += int32_t(1) << (trial * 3);  // 1, 8, ..., 2^27
        const Comparison r = sampled(c, wrong);
        CHECK_FALSE(r.passed);
        CHECK(r.sampled->bad_rows == 1);
      }
    }
  }

  TEST_CASE("NaN and Inf in the inputs: the rows they reach are left to the witnesses, which judge them") {
    GemmDesc d = desc(DataType::f32, 64, 64, 64);
    Call c = make_call(d, 61);
    reinterpret_cast<float*>(c.a.data())[5 * 64 + 3] = std::numeric_limits<float>::infinity();  // row 5 of A
    const auto right = right_result(c);
    const Comparison r = sampled(c, right, {}, uint64_t{1} << 30);  // every element a witness at this size
    CHECK_MESSAGE(r.passed, r.summary());
    CHECK(r.sampled->rows_unjudged == 1);
    auto wrong = right;
    reinterpret_cast<float*>(wrong.data())[5 * 64 + 7] = 0.0f;  // where the reference is an infinity
    CHECK_FALSE(sampled(c, wrong, {}, uint64_t{1} << 30).passed);
  }

  TEST_CASE("the witnesses cover every tile of every entry, and the budget coarsens the tile it answers for") {
    GemmDesc d = desc(DataType::f32, 1000, 700, 4);
    d.batch = 2;
    const Call c = make_call(d, 71);
    const auto right = right_result(c);
    const Comparison r = sampled(c, right, {}, uint64_t{1} << 20);
    REQUIRE(r.sampled);
    CHECK(r.sampled->tile_m == 32);
    CHECK(r.sampled->tile_n == 32);
    const Comparison small = sampled(c, right, {}, 4000);  // too little for 32 x 32: larger tiles, said so
    CHECK(small.passed);
    CHECK(small.sampled->tile_m * small.sampled->tile_n > 32 * 32);
    // A wrong block the size of the answered tile, anywhere, in either entry, fails.
    std::mt19937_64 rng(3);
    for (int trial = 0; trial < 30; ++trial) {
      auto wrong = right;
      const int64_t t = int64_t(rng() % 2), tm = small.sampled->tile_m, tn = small.sampled->tile_n;
      const int64_t i0 = int64_t(rng() % uint64_t(1000 - tm)), j0 = int64_t(rng() % uint64_t(700 - tn));
      for (int64_t i = i0; i < i0 + tm; ++i)
        for (int64_t j = j0; j < j0 + tn; ++j) add(wrong, DataType::f32, uint64_t(t * 700000 + i * 700 + j), 1e-4);
      CHECK_FALSE(sampled(c, wrong, {}, 4000).passed);
    }
  }
}
