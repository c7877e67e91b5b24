#include "ozaki/guard.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace vkgemm::ozaki {

bool guarded(DataType type, uint64_t k, uint32_t moduli) noexcept { return moduli >= default_moduli(type, k); }

Candidates candidate_moduli(DataType type, uint64_t k, uint32_t requested) {
  Candidates c;
  const uint32_t first = requested != 0 ? requested : default_moduli(type, k);
  const uint32_t extra = requested != 0 ? 0 : kExtraModuli;
  const ScaleBits base = scale_bits(make_moduli(first), k);
  for (uint32_t d = 0; d <= extra && first + d <= kMaxModuli; ++d) {
    const ScaleBits bits = scale_bits(make_moduli(first + d), k);
    c.moduli[c.count] = first + d;
    c.shift[c.count++] = {bits.a - base.a, bits.b - base.b};
  }
  return c;
}

double guard_kappa(uint64_t k) noexcept { return 4.0 * std::sqrt(static_cast<double>(std::max<uint64_t>(k, 1))); }

double guard_allowance(DataType type, uint64_t k, const ScaleBits& bits) noexcept {
  const int unit_roundoff_exponent = type == DataType::f32 ? -24 : -53;
  constexpr double kSlack = 1.0 + 0x1p-19;  // the 1-norms' summation (< 2^-21) and the comparison's roundings
  return std::ldexp(guard_kappa(k), unit_roundoff_exponent + bits.a + bits.b - 2 * OZAKI_MAGNITUDE_BITS) / kSlack;
}

double guard_truncation(const LineStats& row, const LineStats& column, uint64_t k, const ScaleBits& shift) noexcept {
  double bound = 0.0;
  if (row.inexact) bound += std::ldexp(0.5 * column.norm, -shift.a);
  if (column.inexact) bound += std::ldexp(0.5 * row.norm, -shift.b);
  if (row.inexact && column.inexact) bound += std::ldexp(0.25 * static_cast<double>(k), -(shift.a + shift.b));
  return bound;
}

double level_bound(const MagnitudeLevels& row, const MagnitudeLevels& column, uint64_t k) noexcept {
  double bound = 0.0;
  const auto weight = [](uint32_t b) {
    return static_cast<double>(level_floor(b) - (b == 0 ? 0 : level_floor(b - 1)));
  };
  for (uint32_t b = 0; b < OZAKI_MAGNITUDE_LEVELS; ++b) {
    const double wb = weight(b);
    for (uint32_t c = 0; c < OZAKI_MAGNITUDE_LEVELS; ++c) {
      const double wc = weight(c);
      const uint64_t both = uint64_t{row.at_least[b]} + column.at_least[c];
      if (both > k) bound += wb * wc * static_cast<double>(both - k);
    }
  }
  return bound;
}

double extreme_norm(double norm) noexcept {
  const uint64_t high = std::bit_cast<uint64_t>(norm) >> 32;
  return std::bit_cast<double>((high + 1) << 32);
}

void Extremes::take(const LineStats& line) noexcept {
  const double norm = extreme_norm(std::fabs(line.norm));
  for (uint32_t b = 0; b < OZAKI_MAGNITUDE_LEVELS; ++b) {
    const uint32_t count = line.levels.at_least[b];
    worst.levels.at_least[b] = counted ? std::min(worst.levels.at_least[b], count) : count;
  }
  worst.norm = counted ? std::max(worst.norm, norm) : norm;
  worst.inexact = worst.inexact || line.inexact;
  counted = true;
}

bool extremes_admit(const Extremes& rows, const Extremes& columns, uint64_t k, double allowance) noexcept {
  if (!rows.counted || !columns.counted) return false;
  return guard_admits(rows.worst, columns.worst, k, level_bound(rows.worst.levels, columns.worst.levels, k), allowance);
}

uint32_t guard_choice(const LineStats& row, const LineStats& column, uint64_t k, double sums, double allowance,
                      const Candidates& candidates) noexcept {
  uint32_t d = 0;
  while (d < candidates.count && !guard_admits(row, column, k, sums, allowance, candidates.shift[d])) ++d;
  return d;
}

}  // namespace vkgemm::ozaki
