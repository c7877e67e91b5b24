#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
// The emulated product's span guard (docs/design/ozaki.md, "The span guard"; engine/src/ozaki/guard.hpp is the
// rule, and the CPU model's span_guard the same comparison on the host): one invocation per element (i, j) of
// C of one batch entry sums the magnitude planes' products over the K chunks (a lower bound of
// |op(A)||op(B)|), sets the truncation bound of the rounding to integers beside it from the lines' statistics
// at each candidate moduli count, and sets the refusal word of every count before the first whose allowance
// the bound meets (all of them where none does): the passes of the chosen count then run, or the native
// kernel's. With OZAKI_GUARD_LEVELS the magnitude sums are bounded from below by the lines' magnitude levels
// instead (guard.hpp, level_bound), judging the first count alone; where it refuses, the magnitude planes'
// product and this pass on it decide. With OZAKI_GUARD_EXTREMES, before both, one invocation judges the first
// count on the least favourable pair of lines at once; where it admits, neither runs.
// ozaki_abi.h says what each push constant means here.
#include "gemm_abi.h"
#include "ozaki_abi.h"

layout(local_size_x = OZAKI_MERGE_X, local_size_y = OZAKI_MERGE_Y) in;

layout(std430, set = 0, binding = 0) readonly buffer Sums { int sums[]; };  // the magnitude products
layout(std430, set = 0, binding = 1) buffer Words { int words[]; };         // line statistics, the flag, the refusals

#define GEMM_PUSH_UINT_FIELD(name) uint name;
layout(push_constant) uniform GemmParams {
  GEMM_PUSH_UINT_FIELDS(GEMM_PUSH_UINT_FIELD)
  layout(offset = GEMM_PUSH_SCALARS_OFFSET) double alpha;
  double beta;
} p;

// A line's statistic as the split stored it: its scaled 1-norm, negative where the line is inexact.
double statistic(uint at) { return packDouble2x32(uvec2(uint(words[at]), uint(words[at + 1u]))); }

// 2^-e as a double, for 0 <= e <= 1022: exact.
double inverse_power_of_two(int e) { return packDouble2x32(uvec2(0u, uint(1023 - e) << 20)); }

// guard.hpp's level_bound of the magnitude sum of two lines whose levels are `a` and `b`: the levels' floors
// paired the least favourable way. In units of the lowest floor squared, integers: each level's
// row of terms is at most 4k < 2^32 (a line's k elements are less than 2^30: the 4 GiB a binding holds).
double level_bound(uint a[OZAKI_MAGNITUDE_LEVELS], uint b[OZAKI_MAGNITUDE_LEVELS]) {
  double bound = 0.0;
  [[unroll]] for (uint i = 0u; i < OZAKI_MAGNITUDE_LEVELS; ++i) {
    uint terms = 0u;  // sum_c w_c max(0, A_i + B_c - k), w_0 = 1 and w_c = 2^(c - 1) in the lowest floor's units
    [[unroll]] for (uint c = 0u; c < OZAKI_MAGNITUDE_LEVELS; ++c) {
      const uint both = a[i] + b[c];
      terms += both > p.k_split ? (both - p.k_split) << (c == 0u ? 0u : c - 1u) : 0u;
    }
    bound += double(terms) * double(i == 0u ? 1u : 1u << (i - 1u));
  }
  const double floor_squared = double(1u << (2u * OZAKI_LEVEL_SHIFT));
  return bound * floor_squared;
}

// S_ij, or with OZAKI_GUARD_LEVELS its lower bound from the levels.
double magnitude_sum(uint i, uint j, uint entry, uint row, uint column) {
  if ((p.flags & OZAKI_GUARD_LEVELS) != 0u) {
    uint a[OZAKI_MAGNITUDE_LEVELS], b[OZAKI_MAGNITUDE_LEVELS];
    [[unroll]] for (uint l = 0u; l < OZAKI_MAGNITUDE_LEVELS; ++l) {
      a[l] = uint(words[row + 2u + l]);
      b[l] = uint(words[column + 2u + l]);
    }
    return level_bound(a, b);
  }
  double sums_ij = 0.0;  // each chunk's sum is below 2^31 and nonnegative: the total is exact below 2^53
  for (uint chunk = 0u; chunk < p.K; ++chunk) {
    sums_ij += double(sums[p.a_offset + chunk * p.stride_b + entry * p.stride_a + i * p.N + j]);
  }
  return sums_ij;
}

// The first candidate that admits element (i, j) of entry `entry`, p.lda where none does.
uint choice(uint i, uint j, uint entry) {
  const uint row_at = p.ldb + OZAKI_LINE_WORDS * (entry * p.M + i);
  const uint column_at = p.ldc + OZAKI_LINE_WORDS * (entry * p.N + j);
  const double sums_ij = magnitude_sum(i, j, entry, row_at, column_at);
  const double row = statistic(row_at);
  const double column = statistic(column_at);
  const double allowed = p.alpha * sums_ij;
  // Candidate d's bound over 2^(dA + dB), as guard_truncation: each term scaled by a power of two (exact).
  uint d = 0u;
  for (; d < p.lda; ++d) {
    const int da = d == 0u ? 0 : int((p.b_offset >> (16u * (d - 1u))) & 0xffu);
    const int db = d == 0u ? 0 : int((p.b_offset >> (16u * (d - 1u) + 8u)) & 0xffu);
    double bound = 0.0;
    if (row < 0.0) bound += (0.5 * abs(column)) * inverse_power_of_two(da);
    if (column < 0.0) bound += (0.5 * abs(row)) * inverse_power_of_two(db);
    if (row < 0.0 && column < 0.0) bound += (0.25 * double(p.k_split)) * inverse_power_of_two(da + db);
    if (!(bound > allowed)) break;
  }
  return d;
}

// The first candidate judged once, on the lines' extremes (ozaki_abi.h): the fewest bytes at each level of any
// row against those of any column (level_bound grows with every count, so no pair of lines bounds lower), the
// largest norms and any inexact line (the truncation bound grows with each). Where this admits, every element
// would: the levels' pass is not run. Where no line was taken in (a count word still 0), it refuses.
void judge_extremes() {
  const uint row = OZAKI_EXTREME_LINES_WORD, column = OZAKI_EXTREME_LINES_WORD + OZAKI_EXTREME_WORDS;
  uint a[OZAKI_MAGNITUDE_LEVELS], b[OZAKI_MAGNITUDE_LEVELS];
  bool counted = true;
  [[unroll]] for (uint l = 0u; l < OZAKI_MAGNITUDE_LEVELS; ++l) {
    counted = counted && words[row + l] != 0 && words[column + l] != 0;
    a[l] = 0x7fffffffu - uint(words[row + l]);
    b[l] = 0x7fffffffu - uint(words[column + l]);
  }
  const double row_norm = packDouble2x32(uvec2(0u, uint(words[row + OZAKI_MAGNITUDE_LEVELS]) + 1u));
  const double column_norm = packDouble2x32(uvec2(0u, uint(words[column + OZAKI_MAGNITUDE_LEVELS]) + 1u));
  const bool row_inexact = words[row + OZAKI_MAGNITUDE_LEVELS + 1u] != 0;
  const bool column_inexact = words[column + OZAKI_MAGNITUDE_LEVELS + 1u] != 0;
  double bound = 0.0;
  if (row_inexact) bound += 0.5 * column_norm;
  if (column_inexact) bound += 0.5 * row_norm;
  if (row_inexact && column_inexact) bound += 0.25 * double(p.k_split);
  words[p.c_offset] = !counted || bound > p.alpha * level_bound(a, b) ? 1 : 0;
}

shared uint most[OZAKI_MERGE_X * OZAKI_MERGE_Y];

void main() {
  if ((p.flags & OZAKI_GUARD_EXTREMES) != 0u) {
    if (gl_LocalInvocationIndex == 0u && words[p.split_stride] == 0) judge_extremes();
    return;
  }
  const uint j = gl_GlobalInvocationID.x, i = gl_GlobalInvocationID.y, entry = gl_WorkGroupID.z;
  const uint me = gl_LocalInvocationIndex;
  // An input the split found uncovered (NaN, infinity, a subnormal that matters): its line statistics were not
  // written, and the native kernel runs whatever the refusals.
  most[me] = i < p.M && j < p.N && words[p.split_stride] == 0 ? choice(i, j, entry) : 0u;
  // The workgroup's largest choice, then one store a refusal word where it is not set yet: millions of
  // invocations storing to the same words would queue at the memory behind them.
  for (uint half_size = OZAKI_MERGE_X * OZAKI_MERGE_Y / 2u; half_size > 0u; half_size /= 2u) {
    barrier();
    if (me < half_size) most[me] = max(most[me], most[me + half_size]);
  }
  barrier();
  if (me == 0u) {
    for (uint r = 0u; r < most[0]; ++r) {
      if (words[p.c_offset + r] == 0) words[p.c_offset + r] = 1;
    }
  }
}
