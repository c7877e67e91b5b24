#version 450
#extension GL_GOOGLE_include_directive : require
// The emulated product's control words (ozaki_abi.h): with OZAKI_ARM_CLEAR, a flag is cleared before the
// splits; otherwise one indirect dispatch is armed after them, its grid (M, N, K) when the flag is set (the
// native kernel's) or, with OZAKI_ARM_INVERT, when it is clear (an int8 residue product's), and with
// OZAKI_ARM_SECOND as the second flag says too, else (0, 0, 0).
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
    words[p.split_stride] = 0u;
    return;
  }
  bool run = (words[p.split_stride] != 0u) != ((p.flags & OZAKI_ARM_INVERT) != 0u);
  if ((p.flags & OZAKI_ARM_SECOND) != 0u) {
    run = run && ((words[p.ldb] != 0u) != ((p.flags & OZAKI_ARM_INVERT_SECOND) != 0u));
  }
  words[p.a_offset] = run ? p.M : 0u;
  words[p.a_offset + 1u] = run ? p.N : 0u;
  words[p.a_offset + 2u] = run ? p.K : 0u;
}
