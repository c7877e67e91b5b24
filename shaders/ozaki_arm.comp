#version 450
#extension GL_GOOGLE_include_directive : require
// The emulated product's control words (ozaki_abi.h): with OZAKI_ARM_CLEAR, words are cleared before the
// splits; otherwise the indirect dispatches of one condition are armed: a pass of one candidate moduli count
// runs where the coverage flag is clear and the guard chose that count, the native kernel's (OZAKI_ARM_NATIVE)
// where the flag is set or no count was admitted, a later pass of the span guard (OZAKI_ARM_GUARD: the
// levels' pass, or the magnitude products and the pass on them) where the flag is clear and the guard's pass
// before it refused the first count; else their grids are (0, 0, 0).
#include "gemm_abi.h"
#include "ozaki_abi.h"

layout(local_size_x = 1) in;

layout(std430, set = 0, binding = 1) buffer Words { uint words[]; };

layout(push_constant) uniform ArmWords { uint w[GEMM_PUSH_BYTES / 4u]; } p;

void main() {
  const uint mode = p.w[OZAKI_ARM_WORD_MODE], flag = p.w[OZAKI_ARM_WORD_FLAG], gate = p.w[OZAKI_ARM_WORD_GATE];
  if ((mode & OZAKI_ARM_CLEAR) != 0u) {
    for (uint i = 0u; i < gate; ++i) words[flag + i] = 0u;
    return;
  }
  const bool covered = words[flag] == 0u;
  bool run = covered && words[gate] != 0u;  // OZAKI_ARM_GUARD
  if ((mode & OZAKI_ARM_GUARD) == 0u) {
    const uint candidates = p.w[OZAKI_ARM_WORD_CANDIDATES];
    uint choice = 0u;
    for (uint d = 0u; d < candidates; ++d) choice += words[gate + d] != 0u ? 1u : 0u;
    run = (mode & OZAKI_ARM_NATIVE) != 0u ? !covered || choice == candidates
                                          : covered && choice == p.w[OZAKI_ARM_WORD_CANDIDATE];
  }
  for (uint s = 0u; s < p.w[OZAKI_ARM_WORD_SLOTS]; ++s) {
    const uint at = OZAKI_ARM_WORD_SLOT + 4u * s, command = p.w[at];
    for (uint i = 0u; i < 3u; ++i) words[command + i] = run ? p.w[at + 1u + i] : 0u;
  }
}
