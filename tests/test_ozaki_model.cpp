// The CPU model of the emulated f64 and f32 product (engine/src/ozaki/): its integers are right (moduli,
// residues, the reconstruction, the scaling budget), its products meet the native kernel's bound against the
// double-accumulation reference with the default moduli, its own bound holds with fewer, and that bound
// rejects each mutation (a modulus dropped, a wrong CRT weight, a scale off by one, a K chunk lost, an int32
// product past its exactness limit). Inputs the moduli cannot cover (NaN, infinity, a subnormal that matters)
// are reported, never computed. Host arithmetic alone.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "ozaki/bound.hpp"
#include "ozaki/model.hpp"
#include "reference/emulated_check.hpp"
#include "ozaki_families.hpp"
#include "core/element_access.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;
using namespace vkgemm::ozaki;

namespace {

__extension__ typedef __int128 Int128;  // the reconstruction's integers, up to 2^115

// The operands and C0 of a call as bytes of desc.type, drawn uniform in [-1, 1) and multiplied by 2^r with
// r uniform in [-spread, spread] per row of op(A) and per column of op(B).
struct Operands {
  std::vector<std::byte> a, b, c0;
};

void put(std::vector<std::byte>& v, DataType type, size_t i, double x) { detail::store_element(type, v.data(), i, x); }

// Index of element (r, c) of op(X) of entry `entry` in the operand's storage.
size_t index_of(const GemmDesc& d, char which, int64_t entry, int64_t r, int64_t c) {
  const OperandExtent e = operand_extent(d, which);
  if ((which == 'A' && d.op_a == Op::t) || (which == 'B' && d.op_b == Op::t)) std::swap(r, c);
  return static_cast<size_t>(entry * e.stride + (d.layout == Layout::row_major ? r * e.ld + c : c * e.ld + r));
}

Operands draw(const GemmDesc& d, std::mt19937_64& rng, int spread = 0) {
  const size_t size = element_size(d.type);
  Operands o;
  o.a.resize(operand_extent(d, 'A').elements * size);
  o.b.resize(operand_extent(d, 'B').elements * size);
  o.c0.resize(operand_extent(d, 'C').elements * size);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-spread, spread);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < o.a.size() / size; ++i) put(o.a, d.type, i, nan);  // gaps poisoned
  for (size_t i = 0; i < o.b.size() / size; ++i) put(o.b, d.type, i, nan);
  for (size_t i = 0; i < o.c0.size() / size; ++i) put(o.c0, d.type, i, d.beta == 0.0 ? nan : value(rng));
  const int64_t entries_a = d.stride_a == 0 ? 1 : d.batch, entries_b = d.stride_b == 0 ? 1 : d.batch;
  for (int64_t t = 0; t < entries_a; ++t)
    for (int64_t i = 0; i < d.m; ++i) {
      const double scale = std::ldexp(1.0, exponent(rng));
      for (int64_t p = 0; p < d.k; ++p) put(o.a, d.type, index_of(d, 'A', t, i, p), value(rng) * scale);
    }
  for (int64_t t = 0; t < entries_b; ++t)
    for (int64_t j = 0; j < d.n; ++j) {
      const double scale = std::ldexp(1.0, exponent(rng));
      for (int64_t p = 0; p < d.k; ++p) put(o.b, d.type, index_of(d, 'B', t, p, j), value(rng) * scale);
    }
  return o;
}

struct Outcome {
  bool covered = false;
  Comparison native;      // against the native kernel's bound (reference.hpp)
  EmulationCheck own;     // against the emulation's own bound
};

Outcome run(const GemmDesc& d, const Operands& o, const ModelOptions& options = {}) {
  std::vector<std::byte> c(o.c0.size());
  Outcome out;
  out.covered = model_gemm(d, o.a.data(), o.b.data(), o.c0.data(), c.data(), options);
  out.native = compare_with_reference(d, o.a.data(), o.b.data(), o.c0.data(), c.data());
  out.own = check_emulated(d, o.a.data(), o.b.data(), o.c0.data(), c.data(), options);
  return out;
}

GemmDesc square(DataType type, int64_t m, int64_t n, int64_t k) {
  GemmDesc d;
  d.type = type;
  d.m = m, d.n = n, d.k = k;
  return d;
}

// The span guard's worst ratio of truncation bound to allowance (above 1: refused) on the dense row-major call
// d with `moduli` moduli (guard.hpp).
double guard_ratio(const GemmDesc& d, const Operands& o, uint32_t moduli) {
  const auto m = static_cast<uint32_t>(d.m), n = static_cast<uint32_t>(d.n), k = static_cast<uint32_t>(d.k);
  std::vector<double> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = detail::load_element(d.type, o.a.data(), i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = detail::load_element(d.type, o.b.data(), i);
  const Moduli table = make_moduli(moduli);
  const ScaleBits bits = scale_bits(table, k);
  const SplitSide sa = split(a, m, k, true, bits.a, table, d.type);
  const SplitSide sb = split(b, k, n, false, bits.b, table, d.type);
  double worst = 0.0;
  span_guard(sa, sb, m, n, k, guard_allowance(d.type, k, bits), &worst);
  return worst;
}

// The count the model's span guard chooses for the dense row-major call d (0 where it refuses every one): the
// count model_gemm computes with, read from the guard's own rule.
uint32_t choose_moduli_for_test(const GemmDesc& d, const Operands& o) {
  const auto m = static_cast<uint32_t>(d.m), n = static_cast<uint32_t>(d.n), k = static_cast<uint32_t>(d.k);
  std::vector<double> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = detail::load_element(d.type, o.a.data(), i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = detail::load_element(d.type, o.b.data(), i);
  const Candidates candidates = candidate_moduli(d.type, k, 0);
  const Moduli table = make_moduli(candidates.moduli[0]);
  const ScaleBits bits = scale_bits(table, k), last = scale_bits(make_moduli(candidates.last()), k);
  const SplitSide sa = split(a, m, k, true, bits.a, table, d.type, last.a - bits.a);
  const SplitSide sb = split(b, k, n, false, bits.b, table, d.type, last.b - bits.b);
  if (!sa.covered || !sb.covered) return 0;
  const uint32_t choice = span_choice(sa, sb, m, n, k, guard_allowance(d.type, k, bits), candidates);
  return choice == candidates.count ? 0 : candidates.moduli[choice];
}

}  // namespace

TEST_SUITE("ozaki model") {
  TEST_CASE("the moduli are pairwise coprime and Garner's constants invert their products") {
    for (uint32_t i = 0; i < kMaxModuli; ++i)
      for (uint32_t j = i + 1; j < kMaxModuli; ++j) CHECK(std::gcd(kModuliTable[i], kModuliTable[j]) == 1u);
    const Moduli m = make_moduli(kMaxModuli);
    for (uint32_t j = 0; j < m.count; ++j) {
      uint64_t w = 1;  // W_j mod p_j
      for (uint32_t i = 0; i < kMaxModuli; ++i) {
        if (i >= j) {
          CHECK(kGarnerWeights[j * kMaxModuli + i] == 0u);
          continue;
        }
        CHECK(m.weight[j][i] == w);
        w = w * m.p[i] % m.p[j];
      }
      CHECK(w * m.inverse[j] % m.p[j] == 1u % m.p[j]);
      for (uint32_t i = 0; i < j; ++i) {  // the shaders' copy (ozaki_abi.h): weight times inverse
        CHECK(m.scaled[j][i] == m.weight[j][i] * uint64_t{m.inverse[j]} % m.p[j]);
        CHECK(kGarnerWeights[j * kMaxModuli + i] == m.scaled[j][i]);
      }
      CHECK(m.inverse[j] == kGarnerInverses[j]);  // the shaders' copy (shaders/ozaki_abi.h)
    }
    CHECK_THROWS_AS(make_moduli(1), Error);
    CHECK_THROWS_AS(make_moduli(kMaxModuli + 1), Error);
  }

  TEST_CASE("the scaling budget keeps k 2^T below P / 2 and is the largest that does") {
    for (uint32_t count : {2u, 5u, 7u, 14u, 16u, 20u})
      for (uint64_t k : {1ull, 2ull, 3ull, 1000ull, 4096ull, 131073ull, 1ull << 31}) {
        const Moduli m = make_moduli(count);
        const int t = exponent_budget(m, k);
        const long double log2p = static_cast<long double>(log2_product(m));
        const long double log2k = std::log2(static_cast<long double>(k));
        CAPTURE(count);
        CAPTURE(k);
        CHECK(log2k + t + 1 < log2p);   // k 2^(T+1) < P
        CHECK(log2k + t + 2 >= log2p);  // and T + 1 would not be
        const ScaleBits s = scale_bits(m, k);
        CHECK(s.a + s.b <= t);
        CHECK(s.a <= kMaxScaleBits);
      }
  }

  TEST_CASE("balanced residues of integers below 2^62 are exact") {
    std::mt19937_64 rng = test::case_rng("ozaki residues");
    for (int trial = 0; trial < 20000; ++trial) {
      const int bits = 1 + static_cast<int>(rng() % 62);
      const auto magnitude = static_cast<int64_t>(rng() >> (64 - bits));
      const int64_t x = (rng() & 1) != 0 ? -magnitude : magnitude;
      const auto v = static_cast<double>(x);
      if (static_cast<int64_t>(v) != x) continue;  // more bits than a double holds: not a split's integer
      for (uint32_t p : kModuliTable) {
        const int32_t r = balanced_residue(v, p);
        CHECK(((static_cast<Int128>(x) - r) % p) == 0);
        CHECK(r >= -static_cast<int32_t>(p / 2));
        CHECK(r <= static_cast<int32_t>((p - 1) / 2));
      }
    }
  }

  TEST_CASE("the reconstruction returns the integer within one rounding, across the balanced range") {
    std::mt19937_64 rng = test::case_rng("ozaki reconstruction");
    for (uint32_t count : {2u, 4u, 7u, 10u, 14u}) {  // P < 2^115: the integers fit __int128
      const Moduli m = make_moduli(count);
      Int128 p = 1;
      for (uint32_t j = 0; j < count; ++j) p *= m.p[j];
      for (int trial = 0; trial < 2000; ++trial) {
        Int128 x = (static_cast<Int128>(rng()) << 64 | rng()) % p;  // in [0, P)
        if (x < 0) x += p;
        x -= p / 2;  // in [-P/2, P/2 - 1]
        if (trial < 4) x = trial < 2 ? -p / 2 + trial : p / 2 - 1 - (trial - 2);  // the range's ends
        std::array<uint32_t, kMaxModuli> residues{};
        for (uint32_t j = 0; j < count; ++j) residues[j] = static_cast<uint32_t>((x % m.p[j] + m.p[j]) % m.p[j]);
        const long double exact = static_cast<long double>(x);
        const long double got = reconstruct(residues, m);
        CAPTURE(count);
        CHECK(std::fabs(got - exact) <= std::ldexp(1.0L, -53) * std::fabs(exact));
      }
    }
  }

  TEST_CASE("the default moduli meet the native kernel's bound, on every layout, op, ld, batch and scalar") {
    std::mt19937_64 rng = test::case_rng("ozaki native bound");
    constexpr int64_t kGuardExactK = 16;
    int checked = 0, refused = 0;
    for (DataType type : {DataType::f64, DataType::f32})
      for (int spread : {0, 20})
        for (Layout layout : {Layout::row_major, Layout::col_major})
          for (Op op_a : {Op::n, Op::t})
            for (Op op_b : {Op::n, Op::t})
              for (auto [m, n, k] : {std::array<int64_t, 3>{1, 1, 1}, {7, 5, 3}, {33, 17, 64}, {16, 9, 300}}) {
                GemmDesc d = square(type, m, n, k);
                d.layout = layout, d.op_a = op_a, d.op_b = op_b;
                const int variant = checked++ % 4;
                if (variant >= 1) d.lda = (op_a == Op::n) == (layout == Layout::row_major) ? k + 3 : m + 2;
                if (variant >= 2) d.batch = 3, d.stride_b = 0;
                if (variant == 1) d.alpha = 3.14, d.beta = 2.5;
                if (variant == 3) d.alpha = -0.5, d.beta = 1.0;
                const Operands o = draw(d, rng, spread);
                const Outcome r = run(d, o);
                CAPTURE(test::describe(d));
                CAPTURE(spread);
                if (!r.covered) {
                  // The span guard refused: the device computes the call with the native kernel. Its lower
                  // bound of |A||B| sums k products of 7-bit magnitudes, coarse over a few terms, so it may
                  // refuse unspread inputs below kGuardExactK; never at or above it.
                  CHECK_MESSAGE(k < kGuardExactK, "the span guard refused unspread inputs");
                  ++refused;
                  continue;
                }
                CHECK_MESSAGE(r.native.passed, r.native.summary());
                CHECK_MESSAGE(r.own.passed, r.own.worst_ratio);
              }
    MESSAGE(checked, " products, ", refused, " refused by the span guard (k below ", kGuardExactK, ")");
  }

  TEST_CASE("the default moduli pass the span guard with a margin of 2 where no line spreads; one fewer does not") {
    CHECK(default_moduli(DataType::f32, 1u << 20) == 7u);
    CHECK(default_moduli(DataType::f64, 1u << 20) == 14u);
    std::mt19937_64 rng = test::case_rng("ozaki guard margins");
    for (DataType type : {DataType::f64, DataType::f32})
      for (int64_t k : {1, 16, 256, 1024, 4096})
        for (int spread : {0, 20}) {  // spread: rows and columns scaled apart, which the split takes free
          const GemmDesc d = square(type, 16, 12, k);
          const Operands o = draw(d, rng, spread);
          const uint32_t moduli = default_moduli(type, static_cast<uint64_t>(k));
          CAPTURE(type);
          CAPTURE(k);
          CAPTURE(spread);
          const double at_default = guard_ratio(d, o, moduli);
          CHECK(at_default <= 0.5);
          if (k >= 16) CHECK(guard_ratio(d, o, moduli - 1) > 0.5);  // one fewer keeps no margin
          const Outcome r = run(d, o);
          CHECK(r.covered);
          CHECK_MESSAGE(r.native.passed, r.native.summary());
        }
  }

  TEST_CASE("f32's default moduli are as accurate as the native kernel's typical error, model bound included") {
    std::mt19937_64 rng = test::case_rng("ozaki f32 accuracy");
    CompareOptions model;
    model.random_inputs = true;  // the native kernel's model bound: its typical error, far below the worst case
    for (int64_t k : {int64_t{1024}, int64_t{4096}}) {
      const GemmDesc d = square(DataType::f32, 24, 20, k);
      const Operands o = draw(d, rng, 20);
      std::vector<std::byte> c(o.c0.size());
      REQUIRE(model_gemm(d, o.a.data(), o.b.data(), o.c0.data(), c.data()));
      const Comparison r = compare_with_reference(d, o.a.data(), o.b.data(), o.c0.data(), c.data(), model);
      CAPTURE(k);
      CHECK_MESSAGE(r.worst_element_ratio < 0.5, r.summary());
    }
  }

  TEST_CASE("the span guard: every hostile family computed within the native bound or refused") {
    namespace families = test::ozaki_families;
    std::mt19937_64 rng = test::case_rng("ozaki guard families");
    for (DataType type : {DataType::f64, DataType::f32})
      for (int64_t k : {int64_t{64}, int64_t{300}})
        for (families::Family f : families::kFamilies) {
          const GemmDesc d = square(type, 24, 20, k);
          const families::Operands fo = families::draw(f, type, d.m, d.n, k, rng);
          Operands o{fo.a, fo.b, std::vector<std::byte>(static_cast<size_t>(d.m * d.n) * element_size(type))};
          CAPTURE(type);
          CAPTURE(k);
          const std::string family = families::name(f);
          CAPTURE(family);
          ModelOptions once;  // the default moduli the only candidate
          once.mutation = Mutation::first_count_only;
          CHECK(run(d, o, once).covered == (families::outcome(f) == families::Outcome::computed));
          const Outcome r = run(d, o);
          if (r.covered) {
            CHECK(families::may_compute(f, type));
          } else {
            CHECK(families::refused(f));
          }
          if (r.covered) CHECK_MESSAGE(r.native.passed, r.native.summary());
          // The mutation at k = 64, where the native bound is within a factor of 4 of the guard's allowance.
          if (k != 64 || !families::refused(f) || f == families::Family::aligned_edge) continue;
          ModelOptions unguarded;  // the mutation: without the guard the family's result is silently wrong
          unguarded.mutation = Mutation::no_guard;
          const Outcome wrong = run(d, o, unguarded);
          CHECK(wrong.covered);
          CHECK_FALSE(wrong.native.passed);
        }
  }

  TEST_CASE("the guard's edge: a guard one modulus too lenient admits a result past the native bound") {
    namespace families = test::ozaki_families;
    std::mt19937_64 rng = test::case_rng("ozaki guard edge");
    for (DataType type : {DataType::f64, DataType::f32}) {
      const GemmDesc d = square(type, 3, 2, 4);
      const families::Operands fo = families::draw(families::Family::aligned_edge, type, 3, 2, 4, rng);
      Operands o{fo.a, fo.b, std::vector<std::byte>(6 * element_size(type))};
      CAPTURE(type);
      const uint32_t moduli = default_moduli(type, 4);
      CHECK(guard_ratio(d, o, moduli) > 1.5);  // refused by a factor, not by a rounding
      ModelOptions once;  // the default moduli the only candidate
      once.mutation = Mutation::first_count_only;
      CHECK_FALSE(run(d, o, once).covered);
      const Outcome chosen = run(d, o);  // a candidate with more moduli covers it within the native bound
      CHECK(chosen.covered);
      CHECK(chosen.native.passed);
      ModelOptions lenient;
      lenient.mutation = Mutation::lenient_guard;
      const Outcome wrong = run(d, o, lenient);
      CHECK(wrong.covered);
      CHECK_FALSE(wrong.native.passed);
      ModelOptions more;  // enough moduli compute it within the native bound, and the guard admits them
      more.moduli = moduli + 1;
      while (more.moduli < kMaxModuli && guard_ratio(d, o, more.moduli) > 1.0) ++more.moduli;
      CAPTURE(more.moduli);
      const Outcome right = run(d, o, more);
      CHECK(right.covered);
      CHECK(right.native.passed);
    }
  }

  TEST_CASE("the count chosen: elements spread 2^+-7 inside lines, refused at the default moduli, computed with more") {
    // The span guard's ratio on such lines (24 x 20, k = 300) is 1.5 to 5 (f32) and 6 to 20 (f64) at the
    // default moduli, a hundredth of that with two more (docs/design/ozaki.md): normal-distributed data's case.
    std::mt19937_64 rng = test::case_rng(test::current_case_name());
    std::uniform_real_distribution<double> value(-1.0, 1.0), octave(-7.0, 7.0);
    for (DataType type : {DataType::f64, DataType::f32}) {
      const GemmDesc d = square(type, 24, 20, 300);
      const size_t size = element_size(type);
      Operands o{std::vector<std::byte>(24 * 300 * size), std::vector<std::byte>(300 * 20 * size),
                 std::vector<std::byte>(24 * 20 * size)};
      for (auto* x : {&o.a, &o.b}) {
        for (size_t i = 0; i < x->size() / size; ++i) {
          detail::store_element(type, x->data(), i, value(rng) * std::exp2(octave(rng)));
        }
      }
      CAPTURE(type);
      const uint32_t moduli = default_moduli(type, 300);
      CHECK(guard_ratio(d, o, moduli) > 1.0);
      CHECK(guard_ratio(d, o, moduli + kExtraModuli) < 0.25);
      ModelOptions once;
      once.mutation = Mutation::first_count_only;
      CHECK_FALSE(run(d, o, once).covered);
      const Outcome r = run(d, o);
      CHECK(r.covered);
      CHECK_MESSAGE(r.native.passed, r.native.summary());
    }
  }

  TEST_CASE("the levels' bound: the least favourable pairing of the floors, never above a magnitude sum") {
    // Brute force over every pairing for short lines: level_bound is the smallest sum of floored products
    // (so the layer cake counts each meeting right); on long lines it is below the sum of every pairing tried
    // and equals the floors' sum where the bytes themselves run against each other.
    std::mt19937_64 rng = test::case_rng(test::current_case_name());
    std::uniform_int_distribution<uint32_t> byte(0, 127), pick(0, 4);
    const auto draw_line = [&](size_t k) {  // bytes of every kind: zeros, powers of two, their neighbours, any
      std::vector<uint32_t> v(k);
      for (uint32_t& x : v) {
        const uint32_t kind = pick(rng), power = 1u << (byte(rng) % 7);
        x = kind == 0 ? 0u : kind == 1 ? power : kind == 2 ? std::min(127u, 2 * power - 1) : byte(rng);
      }
      return v;
    };
    const auto levels_of = [](const std::vector<uint32_t>& v) {
      MagnitudeLevels l;
      for (uint32_t x : v) l.count(x);
      return l;
    };
    const auto floor_level = [](uint32_t x) {  // the largest level floor at most x, 0 below the lowest
      uint32_t f = 0;
      for (uint32_t b = 0; b < OZAKI_MAGNITUDE_LEVELS; ++b) f = x >= level_floor(b) ? level_floor(b) : f;
      return f;
    };
    for (size_t k = 1; k <= 6; ++k)
      for (int trial = 0; trial < 40; ++trial) {
        std::vector<uint32_t> a = draw_line(k), b = draw_line(k);
        std::sort(a.begin(), a.end());
        uint64_t least = UINT64_MAX;
        do {
          uint64_t sum = 0;
          for (size_t t = 0; t < k; ++t) sum += uint64_t{floor_level(a[t])} * floor_level(b[t]);
          least = std::min(least, sum);
        } while (std::next_permutation(a.begin(), a.end()));
        CAPTURE(k);
        CHECK(level_bound(levels_of(a), levels_of(b), k) == static_cast<double>(least));
      }
    for (size_t k : {size_t{64}, size_t{300}, size_t{4096}})
      for (int trial = 0; trial < 8; ++trial) {
        std::vector<uint32_t> a = draw_line(k), b = draw_line(k);
        const double bound = level_bound(levels_of(a), levels_of(b), k);
        for (int order = 0; order < 4; ++order) {
          if (order == 1) std::sort(a.begin(), a.end());
          if (order == 2) std::sort(b.rbegin(), b.rend());  // the least favourable pairing of the bytes
          if (order == 3) std::shuffle(a.begin(), a.end(), rng);
          uint64_t sum = 0, floors = 0;
          for (size_t t = 0; t < k; ++t) {
            sum += uint64_t{a[t]} * b[t];
            floors += uint64_t{floor_level(a[t])} * floor_level(b[t]);
          }
          CAPTURE(k);
          CAPTURE(order);
          CHECK(bound <= static_cast<double>(sum));
          if (order == 2) CHECK(bound == static_cast<double>(floors));  // the least favourable pairing itself
        }
      }
  }

  TEST_CASE("the lines' extremes admit the first count only where every pair of lines does") {
    // The device's first guard pass judges the fewest levels, the largest norms (rounded up) and any inexact
    // line at once (guard.hpp, Extremes): level_bound and the truncation bound are monotone in each, so where
    // the extremes admit, every pair must. Random sets of lines near the allowance, both outcomes counted.
    std::mt19937_64 rng = test::case_rng(test::current_case_name());
    const uint64_t k = 256;
    std::uniform_int_distribution<uint32_t> count(160, 256);
    std::uniform_real_distribution<double> norm(1.0, 2.0);
    std::bernoulli_distribution inexact(0.8);
    int admitted = 0, refused = 0;
    for (int draw = 0; draw < 400; ++draw) {
      const auto line = [&] {
        LineStats l;
        l.norm = std::ldexp(norm(rng), 10), l.inexact = inexact(rng);
        uint32_t c = count(rng);
        for (uint32_t b = 0; b < OZAKI_MAGNITUDE_LEVELS; ++b) {
          c = l.levels.at_least[b] = std::uniform_int_distribution<uint32_t>(c * 3 / 4, c)(rng);
        }
        return l;
      };
      std::vector<LineStats> rows(3), columns(4);
      Extremes row_extremes, column_extremes;
      for (LineStats& l : rows) row_extremes.take(l = line());
      for (LineStats& l : columns) column_extremes.take(l = line());
      const double allowance = std::ldexp(1.0, std::uniform_int_distribution<int>(-12, -4)(rng));
      if (!extremes_admit(row_extremes, column_extremes, k, allowance)) {
        ++refused;
        continue;
      }
      ++admitted;
      for (const LineStats& r : rows)
        for (const LineStats& c : columns) CHECK(guard_admits(r, c, k, level_bound(r.levels, c.levels, k), allowance));
    }
    CHECK(admitted > 0);
    CHECK(refused > 0);
    CHECK_FALSE(extremes_admit(Extremes{}, Extremes{}, k, 1e300));  // no line taken in: refused
  }

  TEST_CASE("the span guard's levels pass decides uniform lines alone, and admits only what the product admits") {
    // The device runs the magnitude product only where the levels pass refuses the first count: uniform data
    // at the sizes the emulation is chosen for must not need it, and wherever the levels admit, the product's
    // verdict is the first count too (its sums are at least the levels' bound).
    namespace families = test::ozaki_families;
    std::mt19937_64 rng = test::case_rng(test::current_case_name());
    for (DataType type : {DataType::f64, DataType::f32}) {
      const GemmDesc d = square(type, 8, 6, 4096);
      const Operands o = draw(d, rng);
      CAPTURE(type);
      CHECK(deciding_pass(d, o.a.data(), o.b.data()) == GuardPass::extremes);
      CHECK(choose_moduli_for_test(d, o) == default_moduli(type, 4096));
    }
    int decided_by_levels = 0, decided_by_product = 0;
    for (DataType type : {DataType::f64, DataType::f32})
      for (int64_t k : {int64_t{64}, int64_t{300}, int64_t{4096}})
        for (families::Family f : families::kFamilies) {
          const GemmDesc d = square(type, 12, 10, k);
          const families::Operands fo = families::draw(f, type, d.m, d.n, k, rng);
          const Operands o{fo.a, fo.b, {}};
          CAPTURE(type);
          CAPTURE(k);
          const std::string family = families::name(f);
          CAPTURE(family);
          const GuardPass pass = deciding_pass(d, o.a.data(), o.b.data());
          if (pass != GuardPass::magnitudes) {
            ++decided_by_levels;
            CHECK(choose_moduli_for_test(d, o) == default_moduli(type, static_cast<uint64_t>(k)));
          } else {
            ++decided_by_product;
          }
          if (f == families::Family::aligned_edge || families::refused(f)) {
            CHECK(pass == GuardPass::magnitudes);
          }
        }
    CHECK(decided_by_levels > 0);
    CHECK(decided_by_product > 0);
  }

  TEST_CASE("the guard's choice from the first count's statistics is each candidate's own verdict") {
    // The device judges every candidate from the first count's split: the statistics scaled by the candidate's
    // extra scale bits (guard.hpp). On lines inexact at every count that is exactly the guard of a split at the
    // candidate's own count: the choice must be the first candidate whose own split the guard admits.
    std::mt19937_64 rng = test::case_rng(test::current_case_name());
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    std::set<uint32_t> seen;  // the spreads make the choices cover the first count, a later one and none
    for (DataType type : {DataType::f64, DataType::f32})
      for (double spread : {1.0, 5.0, 9.0, 30.0}) {
        std::uniform_real_distribution<double> octave(-spread, spread);
        const uint32_t m = 12, n = 10, k = 1024;  // f64 candidates 4 + 3 and 8 + 7 scale bits past the first
        std::vector<double> a(m * k), b(k * n);
        for (auto* x : {&a, &b})
          for (double& v : *x) v = type == DataType::f32 ? static_cast<float>(value(rng) * std::exp2(octave(rng)))
                                                         : value(rng) * std::exp2(octave(rng));
        const Candidates candidates = candidate_moduli(type, k, 0);
        REQUIRE(candidates.count == OZAKI_MAX_CANDIDATES);
        const Moduli first = make_moduli(candidates.moduli[0]);
        const ScaleBits bits = scale_bits(first, k);
        const SplitSide sa = split(a, m, k, true, bits.a, first, type), sb = split(b, k, n, false, bits.b, first, type);
        const uint32_t choice = span_choice(sa, sb, m, n, k, guard_allowance(type, k, bits), candidates);
        uint32_t own = 0;  // the first candidate its own split's guard admits
        for (; own < candidates.count; ++own) {
          const Moduli table = make_moduli(candidates.moduli[own]);
          const ScaleBits own_bits = scale_bits(table, k);
          const SplitSide oa = split(a, m, k, true, own_bits.a, table, type);
          const SplitSide ob = split(b, k, n, false, own_bits.b, table, type);
          // Exactly: each side's statistics scale by a power of two, and the allowance with them.
          const ScaleBits shift = candidates.shift[own];
          CHECK(guard_allowance(type, k, own_bits) ==
                std::ldexp(guard_allowance(type, k, bits), shift.a + shift.b));
          for (uint32_t i = 0; i < m; ++i)
            for (uint32_t j = 0; j < n; ++j) {
              CHECK(guard_truncation(oa.stats[i], ob.stats[j], k) ==
                    std::ldexp(guard_truncation(sa.stats[i], sb.stats[j], k, shift), shift.a + shift.b));
            }
          if (span_guard(oa, ob, m, n, k, guard_allowance(type, k, own_bits))) break;
        }
        CAPTURE(type);
        CAPTURE(spread);
        CHECK(choice == own);
        seen.insert(choice);
      }
    CHECK(seen.size() >= 3);
  }

  TEST_CASE("fewer moduli trade accuracy for speed within the emulation's own bound") {
    std::mt19937_64 rng = test::case_rng("ozaki fewer moduli");
    for (DataType type : {DataType::f64, DataType::f32})
      for (uint32_t count : {3u, 5u, 8u, 12u}) {
        const GemmDesc d = square(type, 24, 20, 100);
        const Operands o = draw(d, rng, 8);
        ModelOptions options;
        options.moduli = count;
        const Outcome r = run(d, o, options);
        CAPTURE(count);
        CHECK(r.own.passed);
        if (count <= (type == DataType::f64 ? 8u : 3u)) CHECK_FALSE(r.native.passed);  // coarser than native
      }
  }

  TEST_CASE("the bounds reject each mutation of the model") {
    std::mt19937_64 rng = test::case_rng("ozaki mutations");
    for (DataType type : {DataType::f64, DataType::f32})
      for (Mutation mutation : {Mutation::drop_modulus, Mutation::wrong_weight, Mutation::scale_off_by_one,
                                Mutation::lose_chunk}) {
        const GemmDesc d = square(type, 9, 11, 64);
        const Operands o = draw(d, rng);
        ModelOptions options;
        options.chunk_k = 16;  // four chunks, so one can be lost
        CHECK(run(d, o, options).own.passed);
        options.mutation = mutation;
        const Outcome r = run(d, o, options);
        CAPTURE(static_cast<int>(mutation));
        CAPTURE(type);
        CHECK_FALSE(r.own.passed);
        CHECK_FALSE(r.native.passed);
      }
  }

  TEST_CASE("K past the int32 exactness limit: chunked it is exact, one product past 2^17 wraps and fails") {
    // Every element of A's row and B's column the same value, whose integer has residue 127 modulo 255:
    // each term of that modulus's product is 127^2 = 16129, and 140000 of them pass 2^31.
    const uint32_t k = 140000;
    const Moduli moduli = make_moduli(default_moduli(DataType::f64, k));
    const ScaleBits bits = scale_bits(moduli, k);
    auto value_with_residue = [](int s) {  // x in [0.5, 1): its integer is x 2^s, near 2^(s-1)
      int64_t integer = int64_t{1} << (s - 1);
      while (((integer % 255) + 255) % 255 != 127) ++integer;
      return std::ldexp(static_cast<double>(integer), -s);
    };
    GemmDesc d = square(DataType::f64, 1, 1, k);
    Operands o;
    o.a.resize(k * 8), o.b.resize(k * 8), o.c0.resize(8);
    for (uint32_t p = 0; p < k; ++p) put(o.a, d.type, p, value_with_residue(bits.a));
    for (uint32_t p = 0; p < k; ++p) put(o.b, d.type, p, value_with_residue(bits.b));
    const Outcome chunked = run(d, o);
    CHECK(chunked.native.passed);
    CHECK(chunked.own.passed);
    ModelOptions whole;
    whole.chunk_k = k;
    const Outcome wrapped = run(d, o, whole);
    CHECK_FALSE(wrapped.native.passed);
    CHECK_FALSE(wrapped.own.passed);
  }

  TEST_CASE("hostile inputs: NaN, infinity and subnormals that matter are not covered; the rest is right") {
    std::mt19937_64 rng = test::case_rng("ozaki hostile");
    for (DataType type : {DataType::f64, DataType::f32}) {
      const GemmDesc d = square(type, 5, 4, 6);
      const double tiny = type == DataType::f32 ? static_cast<double>(std::numeric_limits<float>::denorm_min())
                                                : std::numeric_limits<double>::denorm_min();
      for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity()}) {
        Operands o = draw(d, rng);
        put(o.b, type, 7, bad);
        CHECK_FALSE(run(d, o).covered);
      }
      Operands sub = draw(d, rng);  // a row of subnormals alone: the scaling would make integers of them
      for (int p = 0; p < 6; ++p) put(sub.a, type, static_cast<size_t>(6 + p), tiny * (p + 1));
      CHECK_FALSE(run(d, sub).covered);
      Operands quiet = draw(d, rng);  // a subnormal beside values near 1 rounds to 0 wherever it is: covered
      put(quiet.a, type, 3, tiny);
      put(quiet.a, type, 4, -0.0);
      const Outcome q = run(d, quiet);
      CHECK(q.covered);
      CHECK(q.native.passed);
      Operands zero = draw(d, rng);  // a zero row and a zero column
      for (int p = 0; p < 6; ++p) put(zero.a, type, static_cast<size_t>(12 + p), 0.0);
      for (int p = 0; p < 6; ++p) put(zero.b, type, static_cast<size_t>(4 * p + 1), p % 2 == 0 ? 0.0 : -0.0);
      const Outcome z = run(d, zero);
      CHECK(z.covered);
      CHECK(z.native.passed);
      CHECK(z.own.passed);
    }
  }

  TEST_CASE("exponents near both ends of the range") {
    std::mt19937_64 rng = test::case_rng("ozaki range ends");
    for (DataType type : {DataType::f64, DataType::f32}) {
      for (int top : {type == DataType::f32 ? 40 : 400, type == DataType::f32 ? 110 : 1000})
      for (int sign : {1, -1}) {
        GemmDesc d = square(type, 6, 7, 40);
        d.beta = 0.5;
        Operands o = draw(d, rng);
        // Rows of A near 2^(sign top), columns of B near 2^(-sign top): products near 1, stay normal. Each
        // value's magnitude is first moved into [0.5, 1): a small random one scaled down by 2^-113 would be a
        // subnormal f32 (the emulation rightly does not cover it), which made this case fail one seed in ~60.
        for (size_t i = 0; i < 6 * 40; ++i) {
          double v;
          if (type == DataType::f32) {
            float f;
            std::memcpy(&f, o.a.data() + i * 4, 4);
            v = f;
          } else {
            std::memcpy(&v, o.a.data() + i * 8, 8);
          }
          v = std::copysign(0.5 + 0.5 * std::fabs(v), v);
          put(o.a, type, i, std::ldexp(v, sign * top + static_cast<int>(i / 40) - 3));
        }
        for (size_t i = 0; i < 40 * 7; ++i) {
          double v;
          if (type == DataType::f32) {
            float f;
            std::memcpy(&f, o.b.data() + i * 4, 4);
            v = f;
          } else {
            std::memcpy(&v, o.b.data() + i * 8, 8);
          }
          v = std::copysign(0.5 + 0.5 * std::fabs(v), v);
          put(o.b, type, i, std::ldexp(v, -sign * top + static_cast<int>(i % 7) - 3));
        }
        const Outcome r = run(d, o);
        CAPTURE(type);
        CAPTURE(sign);
        CAPTURE(top);
        CHECK(r.covered);
        // The native elementwise bound at every scale; the whole comparison (its normwise part squares the
        // operands' norms, which leave double's range past 2^±511) where the norms are finite.
        CHECK_MESSAGE(r.native.bad_elements == 0, r.native.summary());
        if (top < 500) CHECK_MESSAGE(r.native.passed, r.native.summary());
        CHECK(r.own.passed);
      }
    }
  }

  TEST_CASE("alpha 0, k 0, and beta 0 over a C of NaN") {
    std::mt19937_64 rng = test::case_rng("ozaki scalars");
    for (DataType type : {DataType::f64, DataType::f32}) {
      GemmDesc d = square(type, 3, 4, 5);
      d.beta = 0.0;  // C0 all NaN (draw): must not reach C
      CHECK(run(d, draw(d, rng)).native.passed);
      d.alpha = 0.0, d.beta = 2.0;
      CHECK(run(d, draw(d, rng)).native.passed);
      d.alpha = 1.0, d.k = 0;
      CHECK(run(d, draw(d, rng)).native.passed);
    }
  }

  TEST_CASE("--verify's rule: fewer moduli judged by the emulation's own bound, full and sampled; mutations fail it") {
    std::mt19937_64 rng = test::case_rng("ozaki verify rule");
    GemmDesc d = square(DataType::f64, 96, 80, 100);
    d.alpha = -1.5, d.beta = 0.5;
    const Operands o = draw(d, rng, 4);
    ModelOptions five;
    five.moduli = 5;
    std::vector<std::byte> c(o.c0.size());
    REQUIRE(model_gemm(d, o.a.data(), o.b.data(), o.c0.data(), c.data(), five));
    GemmOptions gemm;
    gemm.emulation_moduli = 5;
    CHECK(emulation_moduli_to_judge(d, gemm, Kernel::ozaki) == 5u);
    CHECK(emulation_moduli_to_judge(d, gemm, Kernel::blocked) == 0u);  // auto kept the native kernel
    gemm.emulation_moduli = 14;                                        // f64's default: the native bound
    CHECK(emulation_moduli_to_judge(d, gemm, Kernel::ozaki) == 0u);
    const CompareOptions native{}, own{.emulation_moduli = 5};
    // The sampled check with few witnesses (a budget of one multiply-add: the tiles' cover alone), so the row
    // sums judge most rows.
    const SampleOptions sample{.seed = 11, .tile_m = 8, .tile_n = 8, .budget = 1, .vectors = 2};
    const auto full = [&](const std::vector<std::byte>& x, const CompareOptions& opt) {
      return compare_with_reference(d, o.a.data(), o.b.data(), o.c0.data(), x.data(), opt);
    };
    const auto sampled = [&](const std::vector<std::byte>& x, const CompareOptions& opt) {
      return check_sampled(d, o.a.data(), o.b.data(), o.c0.data(), x.data(), opt, sample);
    };
    const Comparison f = full(c, own), s = sampled(c, own);
    CHECK_MESSAGE(f.passed, f.summary());
    CHECK(f.emulation_moduli == 5u);
    CHECK(f.summary().find("emulation's own bound (5 moduli)") != std::string::npos);
    CHECK_MESSAGE(s.passed, s.summary());
    CHECK(s.emulation_moduli == 5u);
    REQUIRE(s.sampled);
    CHECK(s.sampled->witnesses < s.sampled->elements / 4);
    CHECK(check_emulated(d, o.a.data(), o.b.data(), o.c0.data(), c.data(), five).passed);
    // The native kernel's bound fails the same result: five moduli are far coarser.
    CHECK_FALSE(full(c, native).passed);
    CHECK_FALSE(sampled(c, native).passed);
    // The wrong count handed to the bound (six: 2^4 tighter on each side) fails it.
    const CompareOptions six{.emulation_moduli = 6};
    CHECK_FALSE(full(c, six).passed);
    // Sampled with a witness in every row and column (tiles of 2 x 2, and a budget that pays for all of them:
    // a smaller one grows the tiles back): the witnesses' allowances, not the row sums' probabilistic catch,
    // decide, so the verdict does not depend on the draw.
    const uint64_t every_element = uint64_t(d.m) * uint64_t(d.n) * uint64_t(d.k);
    const SampleOptions dense{.seed = 11, .tile_m = 2, .tile_n = 2, .budget = every_element, .vectors = 2};
    const Comparison s6 = check_sampled(d, o.a.data(), o.b.data(), o.c0.data(), c.data(), six, dense);
    REQUIRE(s6.sampled);
    CHECK(s6.sampled->witnesses == s6.sampled->elements);
    CHECK_FALSE(s6.passed);
    // One element moved by 1.5 times its allowance fails the full comparison; by twice the row sums' catch,
    // its row's sum (wherever the witnesses stand).
    const EmulationBound bound(d, o.a.data(), o.b.data(), 5);
    const int64_t i = 37, j = 41;
    const size_t at = static_cast<size_t>(i * d.n + j);
    const std::vector<std::byte> ref = [&] {
      std::vector<std::byte> r(c.size());
      reference_gemm(d, o.a.data(), o.b.data(), o.c0.data(), r.data());
      return r;
    }();
    double abs_ab = 0.0;
    for (int64_t p = 0; p < d.k; ++p) {
      abs_ab += std::fabs(detail::load_element(d.type, o.a.data(), size_t(i * d.k + p)) *
                          detail::load_element(d.type, o.b.data(), size_t(p * d.n + j)));
    }
    const double want = detail::load_element(d.type, ref.data(), at);
    const double allowed = bound.allowed(0, i, j, abs_ab, detail::load_element(d.type, o.c0.data(), at), want);
    std::vector<std::byte> moved = c;
    put(moved, d.type, at, want + 1.5 * allowed);
    CHECK_FALSE(full(moved, own).passed);
    CHECK_FALSE(check_emulated(d, o.a.data(), o.b.data(), o.c0.data(), moved.data(), five).passed);
    put(moved, d.type, at, detail::load_element(d.type, c.data(), at) + 2.0 * s.sampled->row_sum_catch);
    const Comparison caught = sampled(moved, own);
    CHECK_FALSE(caught.passed);
    REQUIRE(caught.sampled);
    CHECK(caught.sampled->bad_rows == 1u);
    // Inputs the emulation does not cover: the device ran the native kernel, whose bound judges.
    Operands nan = o;
    put(nan.a, d.type, 5, std::numeric_limits<double>::quiet_NaN());
    std::vector<std::byte> native_c(o.c0.size());
    reference_gemm(d, nan.a.data(), nan.b.data(), nan.c0.data(), native_c.data());
    const Comparison fallback = compare_with_reference(d, nan.a.data(), nan.b.data(), nan.c0.data(), native_c.data(), own);
    CHECK_MESSAGE(fallback.passed, fallback.summary());
    CHECK(fallback.emulation_moduli == 0u);
  }

  TEST_CASE("the emulation's bound in the sampled check: f32, column-major, transposed, batched, broadcast B") {
    std::mt19937_64 rng = test::case_rng("ozaki sampled bound");
    for (DataType type : {DataType::f64, DataType::f32})
      for (Layout layout : {Layout::row_major, Layout::col_major}) {
        GemmDesc d = square(type, 40, 36, 70);
        d.layout = layout, d.op_a = Op::t, d.alpha = 2.0, d.beta = -1.0;
        d.batch = 3, d.stride_b = 0;
        const Operands o = draw(d, rng, 6);
        const uint32_t count = type == DataType::f64 ? 6u : 3u;
        ModelOptions options;
        options.moduli = count;
        std::vector<std::byte> c(o.c0.size());
        REQUIRE(model_gemm(d, o.a.data(), o.b.data(), o.c0.data(), c.data(), options));
        const CompareOptions own{.emulation_moduli = count};
        const SampleOptions sample{.seed = 3, .tile_m = 8, .tile_n = 8, .budget = 1, .vectors = 2};
        CAPTURE(test::describe(d));
        const Comparison f = compare_with_reference(d, o.a.data(), o.b.data(), o.c0.data(), c.data(), own);
        const Comparison s = check_sampled(d, o.a.data(), o.b.data(), o.c0.data(), c.data(), own, sample);
        CHECK_MESSAGE(f.passed, f.summary());
        CHECK_MESSAGE(s.passed, s.summary());
        CHECK_FALSE(compare_with_reference(d, o.a.data(), o.b.data(), o.c0.data(), c.data()).passed);
      }
  }
}
