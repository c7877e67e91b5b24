// The span guard (docs/design/ozaki.md, "The span guard"): the rule that admits an emulated product only where
// its truncation bound is within the allowance of every element, written once for the CPU model and for the
// device's guard pass (shaders/ozaki_guard.comp takes `allowance` as its alpha and compares as `admits` does).
//
// Per element (i, j), in the scaled units of the split (row i of op(A) times 2^e_i, column j of op(B) times
// 2^f_j), the truncation bound of the rounding to integers is
//   t'_ij = [row i inexact] |B'_j|_1 / 2 + [column j inexact] |A'_i|_1 / 2 + [both] k / 4,
// |A'_i|_1 = sum_t |a_it| 2^e_i (before rounding), "inexact" a line with some element that is not an integer
// multiple of its quantum (an exact line's elements are their integers: no error). The magnitude planes'
// product S_ij = sum_t floor(|a_it| 2^(e_i - sA + 7)) floor(|b_tj| 2^(f_j - sB + 7)) gives the lower bound
// S_ij 2^(sA + sB - 14) <= (|op(A)||op(B)|)_ij 2^(e_i + f_j). The guard admits the product when for every element
//   t'_ij <= kappa(k) u S_ij 2^(sA + sB - 14),   kappa(k) = 4 sqrt(k),
// u the unit roundoff of C's type: the emulated error is then at most 4 sqrt(k) u (|op(A)||op(B)|)_ij beside the
// final roundings (bound.hpp): within the native kernel's worst case 2 (k + 2) u (|op(A)||op(B)|)_ij at every k
// (2 (k + 2) - 4 sqrt(k) = 2 (sqrt(k) - 1)^2 + 2), a fraction 2 / sqrt(k) of it, and of the size of the native
// kernel's typical error, which grows as sqrt(k). Else the native kernel computes the call. (kappa = 2 sqrt(k)
// refused inputs without spread at small k, where the magnitude sums of 16 terms vary by a factor of 2.)
#pragma once

#include <array>
#include <cstdint>

#include "ozaki/moduli.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::ozaki {

// Whether the guard runs: with at least the type's default moduli, whose promise is the native kernel's
// accuracy. Fewer moduli are a request for less (judged by the emulation's own bound, bound.hpp): no guard.
bool guarded(DataType type, uint64_t k, uint32_t moduli) noexcept;

// The count chosen on the device (docs/design/ozaki.md): the span guard judges the product at the type's
// default moduli and at up to kExtraModuli more at once, and the fewest that every element admits computes
// it; the native kernel where none does. A count the caller chose (`requested` nonzero) is the only candidate.
inline constexpr uint32_t kExtraModuli = OZAKI_MAX_CANDIDATES - 1;
struct Candidates {
  uint32_t count = 0;                                 // 1 to OZAKI_MAX_CANDIDATES
  std::array<uint32_t, OZAKI_MAX_CANDIDATES> moduli{};  // increasing
  std::array<ScaleBits, OZAKI_MAX_CANDIDATES> shift{};  // each one's scale bits past the first's (>= 0)
  uint32_t last() const noexcept { return moduli[count - 1]; }
};
Candidates candidate_moduli(DataType type, uint64_t k, uint32_t requested);

// kappa(k): the allowance in units of u (|op(A)||op(B)|)_ij.
double guard_kappa(uint64_t k) noexcept;

// The allowance per unit of magnitude sum, kappa(k) u 2^(sA + sB - 14), lowered by the slack that covers the
// guard's own roundings (the 1-norms are sums of up to 2^32 doubles: relative error below 2^-21).
double guard_allowance(DataType type, uint64_t k, const ScaleBits& bits) noexcept;

// A line's magnitude levels (ozaki_abi.h): at_least[b] counts its magnitude bytes of at least the floor
// f_b = 2^(OZAKI_LEVEL_SHIFT + b) (16, 32, 64), b = 0 .. OZAKI_MAGNITUDE_LEVELS - 1.
inline constexpr uint32_t level_floor(uint32_t b) noexcept { return 1u << (OZAKI_LEVEL_SHIFT + b); }
struct MagnitudeLevels {
  std::array<uint32_t, OZAKI_MAGNITUDE_LEVELS> at_least{};
  void count(uint32_t magnitude) noexcept {
    for (uint32_t b = 0; b < OZAKI_MAGNITUDE_LEVELS; ++b) at_least[b] += magnitude >= level_floor(b) ? 1u : 0u;
  }
};

// A lower bound of the magnitude sum S_ij = sum_t |a_t| |b_t| of two lines of k magnitude bytes from their
// levels alone, without the product: each byte rounded down to its level's floor (0 below 16, then 16, 32, 64),
// and the floors paired the least favourable way (A's largest with B's smallest: the rearrangement
// inequality). Written as a layer cake, floor(x) = sum_b [x >= f_b] w_b (w_0 = f_0, w_b = f_b - f_(b-1)), the
// pairing's sum is
//   sum_b sum_c w_b w_c max(0, A_b + B_c - k),
// A_b + B_c - k the positions where A's top A_b and B's top B_c must meet when B runs the other way. Three
// levels keep it to nine terms an element of C (seven cost the device's pass more than the product it saves);
// on uniform lines it is about a third of S_ij. The span guard's first pass judges with it: where it admits
// the first count, the magnitude sums would too (S_ij >= the bound), and their product is not run.
double level_bound(const MagnitudeLevels& row, const MagnitudeLevels& column, uint64_t k) noexcept;

// One line's statistics, as the split stores them: its scaled 1-norm, whether it is inexact, its levels.
struct LineStats {
  double norm = 0.0;
  bool inexact = false;
  MagnitudeLevels levels;
};

// t'_ij, the truncation bound of element (i, j) in the scaled units of the statistics' count, divided by
// 2^(shift.a + shift.b): the bound at a count whose scale bits are `shift` more, against that count's allowance
// divided by the same (the statistics scale by 2^shift exactly; an inexact line stays counted inexact).
double guard_truncation(const LineStats& row, const LineStats& column, uint64_t k,
                        const ScaleBits& shift = {}) noexcept;

// The span guard's passes on the device, in the order they run (ozaki_guard.comp): the first count judged once
// on the lines' extremes, then element by element on the lines' levels, then every candidate element by
// element on the magnitude products; each later pass only where the one before refused the first count.
enum class GuardPass { extremes, levels, magnitudes };

// The extremes of one side's lines (op(A)'s rows, or op(B)'s columns, over every batch entry), as the split keeps
// them in the workspace (ozaki_abi.h, OZAKI_EXTREME_LINES_WORD): the fewest bytes at each level, the largest
// norm rounded up to extreme_norm, and whether any line is inexact. level_bound grows with every count and
// guard_truncation with each norm and inexactness, so the row extremes against the column extremes admit the
// first count only where every element would.
double extreme_norm(double norm) noexcept;  // the double of norm's high 32 bits plus one, its low 32 bits 0
struct Extremes {
  LineStats worst;
  bool counted = false;  // some line taken in
  void take(const LineStats& line) noexcept;
};
bool extremes_admit(const Extremes& rows, const Extremes& columns, uint64_t k, double allowance) noexcept;

// Whether element (i, j) with magnitude sum `sums` is admitted at the candidate shifted by `shift`.
inline bool guard_admits(const LineStats& row, const LineStats& column, uint64_t k, double sums, double allowance,
                         const ScaleBits& shift = {}) noexcept {
  return !(guard_truncation(row, column, k, shift) > allowance * sums);
}

// The first candidate that admits element (i, j), `allowance` the first's; candidates.count where none does.
uint32_t guard_choice(const LineStats& row, const LineStats& column, uint64_t k, double sums, double allowance,
                      const Candidates& candidates) noexcept;

}  // namespace vkgemm::ozaki
