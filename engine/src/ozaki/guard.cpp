#include "ozaki/guard.hpp"

#include <algorithm>
#include <cmath>

namespace vkgemm::ozaki {

bool guarded(DataType type, uint64_t k, uint32_t moduli) noexcept { return moduli >= default_moduli(type, k); }

uint32_t escalated_moduli(DataType type, uint64_t k, uint32_t requested) noexcept {
  const uint32_t more = default_moduli(type, k) + kEscalation;
  return requested == 0 && more <= kMaxModuli ? more : 0;
}

double guard_kappa(uint64_t k) noexcept { return 4.0 * std::sqrt(static_cast<double>(std::max<uint64_t>(k, 1))); }

double guard_allowance(DataType type, uint64_t k, const ScaleBits& bits) noexcept {
  const int unit_roundoff_exponent = type == DataType::f32 ? -24 : -53;
  constexpr double kSlack = 1.0 + 0x1p-19;  // the 1-norms' summation (< 2^-21) and the comparison's roundings
  return std::ldexp(guard_kappa(k), unit_roundoff_exponent + bits.a + bits.b - 2 * OZAKI_MAGNITUDE_BITS) / kSlack;
}

double guard_truncation(const LineStats& row, const LineStats& column, uint64_t k) noexcept {
  double bound = 0.0;
  if (row.inexact) bound += 0.5 * column.norm;
  if (column.inexact) bound += 0.5 * row.norm;
  if (row.inexact && column.inexact) bound += 0.25 * static_cast<double>(k);
  return bound;
}

}  // namespace vkgemm::ozaki
