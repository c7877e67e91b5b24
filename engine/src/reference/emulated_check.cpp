#include "reference/emulated_check.hpp"

#include "ozaki/bound.hpp"
#include "reference/pick.hpp"
#include "vkgemm/reference.hpp"

namespace vkgemm::ozaki {

EmulationCheck check_emulated(const GemmDesc& desc, const void* a, const void* b, const void* c_in,
                              const void* c_out, const ModelOptions& options) {
  // The full comparison's elements (reference_blas.cpp) held to the emulation's bound (bound.hpp), whether
  // or not the inputs are covered: the model's own check, one rule with --verify's.
  check_gemm(desc);
  const EmulationBound bound(desc, a, b, options.moduli);
  Comparison cmp = detail::judge_picked(desc, a, b, c_in, c_out, {}, detail::Pick::every(desc), {}, nullptr, &bound);
  detail::judge_gaps(desc, c_in, c_out, cmp);
  detail::decide(desc, cmp);
  EmulationCheck check;
  check.passed = cmp.passed;
  check.bad_elements = cmp.bad_elements;
  check.first_bad = cmp.first_bad;
  check.worst_ratio = cmp.worst_element_ratio;
  return check;
}

}  // namespace vkgemm::ozaki
