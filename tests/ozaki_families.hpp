// The hostile input families of the emulated product's span guard (engine/src/ozaki/guard.hpp), shared by the
// CPU model's suite and the device's: each family's operands of a dense row-major m x k A and k x n B, and
// what the guard must do with them at the type's default moduli.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ozaki/moduli.hpp"
#include "core/element_access.hpp"

namespace vkgemm::test::ozaki_families {

enum class Family {
  uniform,           // uniform(-1, 1)
  lines_apart,       // rows of A and columns of B scaled by 2^U(-200, 200) (f32: 60): the split takes it free
  spread_inside,     // every element scaled by 2^U(-60, 60) (f32: 20): a row's span the moduli cannot cover
  dominant,          // one element of 2^40 (f32: 2^12) in each row of A, the rest uniform
  cancellation,      // A = [X X], B = [Y; -Y + delta]: C small beside |A||B|
  subnormals,        // uniform rows with subnormals among them (they round to 0: the error stays tiny)
  spread_and_apart,  // spread_inside within lines scaled far apart
  aligned_edge,      // rows [1, v, v, ...] against columns [0, 1, 1, ...], every rounding the same sign at the
                     // default moduli: the error 2^(6 - sA) / u times u |A||B|, past the native bound at small k
};
inline constexpr Family kFamilies[] = {Family::uniform,      Family::lines_apart, Family::spread_inside,
                                       Family::dominant,     Family::cancellation, Family::subnormals,
                                       Family::spread_and_apart, Family::aligned_edge};

inline const char* name(Family f) {
  constexpr const char* kNames[] = {"uniform", "lines apart", "spread inside", "dominant", "cancellation",
                                    "subnormals", "spread and apart", "aligned edge"};
  return kNames[static_cast<int>(f)];
}

// What the emulation does with the family: computed at the default moduli; refused there by the span guard
// and computed with a count it chose among the candidates (guard.hpp: up to two more); or refused at every
// candidate (the native kernel).
enum class Outcome { computed, more_moduli, refused };
inline Outcome outcome(Family f) {
  if (f == Family::aligned_edge) return Outcome::more_moduli;  // past the allowance by a factor, not by 2^8
  const bool refused = f == Family::spread_inside || f == Family::dominant || f == Family::spread_and_apart;
  return refused ? Outcome::refused : Outcome::computed;
}
inline bool refused(Family f) { return outcome(f) == Outcome::refused; }
// Whether the emulation, every candidate count included, may compute the family: f64's refused families never
// are; f32's largest candidate (9 moduli) covers some draws of its spread and dominant families (within the
// native bound).
inline bool may_compute(Family f, DataType type) { return !refused(f) || type == DataType::f32; }

struct Operands {
  std::vector<std::byte> a, b;
};

// The aligned family's small element: 2^-6 plus just under half the quantum of a row whose largest is 1 (the
// quantum 2^(1 - sA)), so that it rounds down by almost half a quantum.
inline double aligned_value(DataType type, uint64_t k) {
  const int sa = ozaki::scale_bits(ozaki::make_moduli(ozaki::default_moduli(type, k)), k).a;
  const int digits = type == DataType::f32 ? 24 : 53;
  return std::ldexp(1.0, -6) + std::ldexp(1.0, -sa) - std::ldexp(1.0, -6 - digits + 1);
}

inline Operands draw(Family f, DataType type, int64_t m, int64_t n, int64_t k, std::mt19937_64& rng) {
  const bool f32 = type == DataType::f32;
  const size_t size = element_size(type);
  Operands o;
  o.a.resize(static_cast<size_t>(m * k) * size);
  o.b.resize(static_cast<size_t>(k * n) * size);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  const int inside = f == Family::spread_inside || f == Family::spread_and_apart ? (f32 ? 20 : 60) : 0;
  const int apart = f == Family::lines_apart || f == Family::spread_and_apart ? (f32 ? 60 : 200) : 0;
  std::uniform_int_distribution<int> inside_exp(-inside, inside), apart_exp(-apart, apart);
  std::uniform_int_distribution<int64_t> position(0, k - 1);
  const double tiny = f32 ? static_cast<double>(std::numeric_limits<float>::denorm_min())
                          : std::numeric_limits<double>::denorm_min();
  const double v = aligned_value(type, static_cast<uint64_t>(k));
  for (int64_t i = 0; i < m; ++i) {
    const double row_scale = std::ldexp(1.0, apart_exp(rng));
    const int64_t big = position(rng);
    for (int64_t p = 0; p < k; ++p) {
      double x = value(rng) * std::ldexp(1.0, inside_exp(rng)) * row_scale;
      if (f == Family::dominant && p == big) x = std::ldexp(1.0, f32 ? 12 : 40);
      if (f == Family::cancellation && p >= k / 2) x = detail::load_element(type, o.a.data(), static_cast<uint64_t>(i * k + p - k / 2));
      if (f == Family::subnormals && p % 5 == 2) x = tiny * static_cast<double>(p + 1);
      if (f == Family::aligned_edge) x = p == 0 ? 1.0 : v;
      detail::store_element(type, o.a.data(), static_cast<uint64_t>(i) * static_cast<uint64_t>(k) + static_cast<uint64_t>(p), x);
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    const double column_scale = std::ldexp(1.0, apart_exp(rng));
    for (int64_t p = 0; p < k; ++p) {
      double x = value(rng) * std::ldexp(1.0, inside_exp(rng)) * column_scale;
      if (f == Family::cancellation && p >= k / 2) {
        x = -detail::load_element(type, o.b.data(), static_cast<uint64_t>((p - k / 2) * n + j)) + std::ldexp(value(rng), f32 ? -8 : -20);
      }
      if (f == Family::aligned_edge) x = p == 0 ? 0.0 : 1.0;
      detail::store_element(type, o.b.data(), static_cast<uint64_t>(p) * static_cast<uint64_t>(n) + static_cast<uint64_t>(j), x);
    }
  }
  return o;
}

}  // namespace vkgemm::test::ozaki_families
