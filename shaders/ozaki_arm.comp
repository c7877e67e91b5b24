#version 450
#extension GL_GOOGLE_include_directive : require
// The emulated product's control words (ozaki_abi.h): with OZAKI_ARM_CLEAR, the coverage flag is cleared
// before the splits; otherwise one indirect dispatch of the native kernel is armed after them, its grid
// (M, N, K) when the flag is set and (0, 0, 0) when the emulation covers the product.
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
  const bool fall_back = words[p.split_stride] != 0u;
  words[p.a_offset] = fall_back ? p.M : 0u;
  words[p.a_offset + 1u] = fall_back ? p.N : 0u;
  words[p.a_offset + 2u] = fall_back ? p.K : 0u;
}
