// The emulated product's own error bound (docs/correctness.md, "Emulated products"), written once: the full
// comparison and the sampled check (engine/src/reference/) judge an ozaki result by it where the caller asks
// (CompareOptions::emulation_moduli), and the CPU model's check_emulated (model.hpp) by the same.
//
// Per element of batch entry t, with q_i = 2^-e_i the quantum of row i of op(A), r_j = 2^-f_j that of
// column j of op(B), g = 4 2^-53 + u_C:
//   |C - C_exact|_ij <= |alpha| t_ij (1 + g) + g (|alpha| (|op(A)||op(B)|)_ij + |beta| |C0_ij|) + tiny
//   t_ij = q_i / 2 sum_k |b_kj| + r_j / 2 sum_k |a_ik| + k q_i r_j / 4
// tiny = C's subnormal spacing times (|alpha| + 2). Against the CPU reference the reference's own error is
// added: 2 (k + 2) u_ref (|alpha| (|A||B|)_ij + |beta| |C0_ij|) (long double sums for f64, double for f32)
// and u_C |C_ref| (its rounding to C's type), the whole times 1 + 2^-40 for the allowance's own rounding.
//
// The exponents are recomputed from the inputs as the split computes them, each line's largest element in
// [2^(s-1), 2^s) with s the side's scale bits. A column-major call is turned (C^T = op(B)^T op(A)^T), which
// swaps the sides' bits; both sides take the smaller of the two (a quantum at most twice the device's), so
// one bound holds for either layout.
#pragma once

#include <cstdint>
#include <vector>

#include "vkgemm/blas.hpp"

namespace vkgemm::ozaki {

class EmulationBound {
 public:
  // Scans op(A)'s rows and op(B)'s columns of every batch entry (O(batch (mk + kn))). moduli 0: the type's
  // default for k (default_moduli). Throws vkgemm::Error(invalid_argument) for a type other than f32 and f64
  // or a count outside 2 to 20.
  EmulationBound(const GemmDesc& desc, const void* a, const void* b, uint32_t moduli);

  uint32_t moduli() const { return moduli_; }
  // Whether the emulation computes this call: no NaN or infinity in op(A) or op(B), and no subnormal the
  // scaling would make a nonzero integer (split's rule, model.hpp). Where it does not, the device runs the
  // native kernel instead, and the native kernel's bound judges.
  bool covered() const { return covered_; }

  // t_ij of element (i, j) of entry t.
  double truncation(int64_t t, int64_t i, int64_t j) const;
  // |C - C_ref| allowed for element (i, j) of entry t, whose (|op(A)||op(B)|)_ij is abs_ab, C0 c0 (0 when
  // beta = 0) and reference value ref.
  double allowed(int64_t t, int64_t i, int64_t j, double abs_ab, double c0, double ref) const;
  // At least sqrt(sum_j allowed_ij^2) over row i of entry t, given ab >= ||(|op(A)_i| |op(B)|)||_2 and
  // c0 = ||C0_i||_2 (the sampled check's row sums: t_i's norm exactly, the rest by Minkowski's inequality).
  double row_allowed(int64_t t, int64_t i, double ab, double c0) const;

 private:
  uint32_t moduli_ = 0;
  bool covered_ = true;
  int64_t m_ = 0, n_ = 0, k_ = 0;
  double alpha_ = 0.0, beta_ = 0.0;
  double g_ = 0.0, reference_ = 0.0, u_out_ = 0.0, tiny_ = 0.0;
  // Per entry t: row i of op(A) at t m + i, column j of op(B) at t n + j.
  std::vector<double> row_half_quantum_, row_abs_, col_half_quantum_, col_abs_;
  // Per entry: sum_j col_abs_j^2, sum_j col_abs_j r_j / 2, sum_j (r_j / 2)^2, for row_allowed.
  std::vector<double> cc_, cr_, rr_;
};

}  // namespace vkgemm::ozaki
