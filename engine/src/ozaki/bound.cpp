#include "ozaki/bound.hpp"

#include <algorithm>
#include <cmath>

#include "ozaki/model.hpp"
#include "ozaki/moduli.hpp"
#include "core/element_access.hpp"
#include "core/indexer.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/reference.hpp"

namespace vkgemm::ozaki {
namespace {

// What the split sees of one line: its largest finite magnitude, the sum of its magnitudes, its classes.
struct LineTally {
  double largest = 0.0, abs_sum = 0.0;
  bool non_finite = false, has_subnormal = false;
  void add(double v, DataType type) {
    const double a = std::fabs(v);
    if (!std::isfinite(v)) {
      non_finite = true;
      return;
    }
    abs_sum += a;
    largest = std::max(largest, a);
    has_subnormal = has_subnormal || subnormal(v, type);
  }
};

// The lines of entry t: op(A)'s rows (which 'A', lines m, along k) or op(B)'s columns ('B', lines n).
std::vector<LineTally> tally(const GemmDesc& d, const void* x, char which, int64_t t) {
  const detail::Indexer ix = detail::indexer(d, which);
  const int64_t lines = which == 'A' ? d.m : d.n;
  std::vector<LineTally> out(static_cast<size_t>(lines));
  if (d.alpha == 0.0) return out;  // A and B are not read: nothing to scale
  for (int64_t p = 0; p < d.k; ++p)
    for (int64_t l = 0; l < lines; ++l) {
      const uint64_t at = which == 'A' ? ix(t, l, p) : ix(t, p, l);
      out[size_t(l)].add(detail::load_element(d.type, x, at), d.type);
    }
  return out;
}

}  // namespace

EmulationBound::EmulationBound(const GemmDesc& desc, const void* a, const void* b, uint32_t moduli)
    : m_(desc.m), n_(desc.n), k_(desc.k), alpha_(std::fabs(desc.alpha)), beta_(std::fabs(desc.beta)) {
  if (desc.type != DataType::f32 && desc.type != DataType::f64) {
    throw Error(ErrorCode::unsupported_type, "the emulation's bound is of f32 and f64 products");
  }
  const Moduli table = make_moduli(moduli != 0 ? moduli : default_moduli(desc.type, uint64_t(desc.k)));
  moduli_ = table.count;
  const ScaleBits bits = scale_bits(table, uint64_t(desc.k));
  const bool row_major = desc.layout == Layout::row_major;
  const int rows_bits = row_major ? bits.a : bits.b, cols_bits = row_major ? bits.b : bits.a;  // the device's
  const int coarse = std::min(bits.a, bits.b);
  u_out_ = unit_roundoff(desc.type);
  g_ = 4.0 * std::ldexp(1.0, -53) + u_out_;
  const double u_ref = desc.type == DataType::f64 ? std::ldexp(1.0, -63) : std::ldexp(1.0, -52);
  reference_ = 2.0 * double(desc.k + 2) * u_ref;
  tiny_ = (desc.type == DataType::f32 ? std::ldexp(1.0, -149) : std::ldexp(1.0, -1074)) * (alpha_ + 2.0);
  const auto half_quantum = [&](double largest) {  // q / 2 from the coarser side's bits
    return std::ldexp(0.5, -line_scale(largest, false, false, coarse, desc.type).exponent);
  };
  for (int64_t t = 0; t < desc.batch; ++t) {
    for (const LineTally& row : tally(desc, a, 'A', t)) {
      covered_ = covered_ && line_scale(row.largest, row.non_finite, row.has_subnormal, rows_bits, desc.type).covered;
      row_half_quantum_.push_back(half_quantum(row.largest)), row_abs_.push_back(row.abs_sum);
    }
    double cc = 0.0, cr = 0.0, rr = 0.0;
    for (const LineTally& col : tally(desc, b, 'B', t)) {
      covered_ = covered_ && line_scale(col.largest, col.non_finite, col.has_subnormal, cols_bits, desc.type).covered;
      const double r2 = half_quantum(col.largest);
      col_half_quantum_.push_back(r2), col_abs_.push_back(col.abs_sum);
      cc += col.abs_sum * col.abs_sum, cr += col.abs_sum * r2, rr += r2 * r2;
    }
    cc_.push_back(cc), cr_.push_back(cr), rr_.push_back(rr);
  }
}

double EmulationBound::truncation(int64_t t, int64_t i, int64_t j) const {
  if (alpha_ == 0.0 || k_ == 0) return 0.0;
  const double q2 = row_half_quantum_[size_t(t * m_ + i)], r2 = col_half_quantum_[size_t(t * n_ + j)];
  // q/2 sum|b| + r/2 sum|a| + k q r / 4, with q/2 and r/2 held.
  return q2 * col_abs_[size_t(t * n_ + j)] + r2 * row_abs_[size_t(t * m_ + i)] + double(k_) * q2 * r2;
}

double EmulationBound::allowed(int64_t t, int64_t i, int64_t j, double abs_ab, double c0, double ref) const {
  const double scale = alpha_ * abs_ab + beta_ * std::fabs(c0);
  return (alpha_ * truncation(t, i, j) * (1.0 + g_) + (g_ + reference_) * scale + u_out_ * std::fabs(ref) + tiny_) *
         (1.0 + std::ldexp(1.0, -40));
}

double EmulationBound::row_allowed(int64_t t, int64_t i, double ab, double c0) const {
  double truncation = 0.0;
  if (alpha_ != 0.0 && k_ != 0) {
    // t_ij = X cb_j + Y r2_j with X = q/2, Y = sum|a| + k q/2 (r2 = r/2): ||t_i||^2 from the entry's sums.
    const double x = row_half_quantum_[size_t(t * m_ + i)];
    const double y = row_abs_[size_t(t * m_ + i)] + double(k_) * x;
    const auto e = size_t(t);
    truncation = std::sqrt(std::max(0.0, x * x * cc_[e] + 2.0 * x * y * cr_[e] + y * y * rr_[e]));
  }
  // |C_ref| <= |alpha| (|A||B|)_ij + |beta| |C0_ij| (to the reference's own error): its rounding joins g's term.
  return (alpha_ * truncation * (1.0 + g_) + (g_ + reference_ + u_out_) * (alpha_ * ab + beta_ * c0) +
          tiny_ * std::sqrt(double(n_))) *
         (1.0 + std::ldexp(1.0, -30));
}

}  // namespace vkgemm::ozaki
