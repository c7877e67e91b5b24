// The CPU model's results judged by the emulation's own bound (ozaki/bound.hpp): the model (ozaki/model.hpp)
// computes, the reference judges, one rule with --verify's.
#pragma once

#include <cstdint>

#include "ozaki/model.hpp"
#include "vkgemm/blas.hpp"

namespace vkgemm::ozaki {

// The emulation's own bound (bound.hpp, docs/correctness.md "Emulated products"), as --verify judges an
// ozaki result with fewer moduli than the default: each element within its allowance and the normwise
// error within theirs, non-finite elements matching the reference's, the gaps of C untouched.
struct EmulationCheck {
  bool passed = false;
  uint64_t bad_elements = 0;
  uint64_t first_bad = 0;        // index into C's span
  double worst_ratio = 0.0;      // max |C - C_ref| / allowance
};
// Judges c_out (the full call's result) against the reference (reference_gemm(desc, ...)) with the bound
// above for options.moduli (0: the default), the reference's own rounding added, whether or not the inputs
// are covered.
EmulationCheck check_emulated(const GemmDesc& desc, const void* a, const void* b, const void* c_in,
                              const void* c_out, const ModelOptions& options = {});

}  // namespace vkgemm::ozaki
