#version 450
#extension GL_GOOGLE_include_directive : require
// The emulated product's control words (ozaki_abi.h): with OZAKI_ARM_CLEAR, a word is cleared before the
// splits; otherwise one indirect dispatch is armed after the span guard: a pass of one candidate moduli count
// runs where the coverage flag is clear and the guard chose that count, the native kernel's (OZAKI_ARM_NATIVE)
// where the flag is set or no count was admitted, a later pass of the span guard (OZAKI_ARM_GUARD: the
// levels' pass, or the magnitude products and the pass on them) where the flag is clear and the guard's pass
// before it refused the first count; else its grid is (0, 0, 0).
#include "gemm_abi.h"
#include "ozaki_abi.h"

layout(local_size_x = 1) in;

layout(std430, set = 0, binding = 1) buffer Words { uint words[]; };

#define GEMM_PUSH_UINT_FIELD(name) uint name;
layout(push_constant) uniform GemmParams {
  GEMM_PUSH_UINT_FIELDS(GEMM_PUSH_UINT_FIELD)
} p;

void main() {
  if ((p.flags & OZAKI_ARM_CLEAR) != 0u) {
    for (uint w = 0u; w < p.lda; ++w) words[p.split_stride + w] = 0u;
    return;
  }
  const bool covered = words[p.split_stride] == 0u;
  bool run = covered && words[p.ldb] != 0u;  // OZAKI_ARM_GUARD: ldb is the earlier pass's refusal word
  if ((p.flags & OZAKI_ARM_GUARD) == 0u) {
    uint choice = 0u;
    for (uint d = 0u; d < p.ldc; ++d) choice += words[p.ldb + d] != 0u ? 1u : 0u;
    run = (p.flags & OZAKI_ARM_NATIVE) != 0u ? !covered || choice == p.ldc : covered && choice == p.lda;
  }
  words[p.a_offset] = run ? p.M : 0u;
  words[p.a_offset + 1u] = run ? p.N : 0u;
  words[p.a_offset + 2u] = run ? p.K : 0u;
}
