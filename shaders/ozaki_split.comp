#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
// The emulated product's split (docs/design/ozaki.md; engine/src/ozaki/model.cpp `split` is the same
// arithmetic on the host): one workgroup per line of one batch entry — a row of op(A), or with
// OZAKI_SPLIT_COLUMNS a column of op(B) — finds the line's largest magnitude, scales the line by 2^e so it
// lands in [2^(s-1), 2^s) (e = s - x, largest = f 2^x, f in [0.5, 1)), rounds each element to the nearest
// integer (ties to even) and writes its balanced residue modulo each of the first MODULI moduli as one byte of
// that modulus's int8 plane, then the element's magnitude byte into plane MODULI and the line's statistics
// (its scaled 1-norm, whether any element was rounded, its magnitude levels) for the span guard (ozaki_guard.comp). A NaN, an infinity, or a subnormal the scaling would not round to 0 sets the
// coverage flag instead (the native kernel then computes the product). ozaki_abi.h says what each push
// constant means here. ELEM_T is the operand's type (double or float); the arithmetic is double.
#include "gemm_abi.h"
#include "ozaki_abi.h"
#include "ozaki_residue.glsl"

layout(local_size_x = OZAKI_SPLIT_INVOCATIONS) in;
layout(constant_id = 0) const uint MODULI = 14;

layout(std430, set = 0, binding = 0) readonly buffer Source { ELEM_T X[]; };
// The same binding as bits: NaN, infinities and subnormals are told from the stored bits, which no flushing
// of subnormals (a device's float controls) can change.
layout(std430, set = 0, binding = 0) readonly buffer SourceBits { uint X_bits[]; };
layout(std430, set = 0, binding = 1) buffer Words { int words[]; };  // exponents, line statistics, the flag
layout(std430, set = 0, binding = 2) writeonly buffer Planes { uint planes[]; };  // 4 residue bytes a word

#define GEMM_PUSH_UINT_FIELD(name) uint name;
layout(push_constant) uniform GemmParams {
  GEMM_PUSH_UINT_FIELDS(GEMM_PUSH_UINT_FIELD)
  layout(offset = GEMM_PUSH_SCALARS_OFFSET) double alpha;
  double beta;
} p;

shared double largest[OZAKI_SPLIT_INVOCATIONS];  // the maxima, then the 1-norms' partial sums
shared uint flags[OZAKI_SPLIT_INVOCATIONS];  // OZAKI_UNCOVERED_* bits and bit 31, a subnormal seen; then inexact
shared uint levels[OZAKI_SPLIT_GROUP][OZAKI_MAGNITUDE_LEVELS];  // each line's magnitude levels (ozaki_abi.h)

// The index of element t of this line of entry `entry` in X.
uint element_index(uint entry, uint line, uint t) {
  const bool columns = (p.flags & OZAKI_SPLIT_COLUMNS) != 0u;
  const uint r = columns ? t : line, c = columns ? line : t;  // (r, c) of op(A), or of op(B) with columns
  const uint at = (p.flags & GEMM_TRANS_A) != 0u ? c * p.lda + r : r * p.lda + c;
  return p.a_offset + entry * p.stride_a + at;
}

// Element t of this line of entry `entry`, as a double (exact).
double element(uint entry, uint line, uint t) { return double(X[element_index(entry, line, t)]); }

// The stored element's exponent field (in the low bits) and whether its significand is nonzero (bit 31).
uint stored_class(uint index) {
#if defined(OZAKI_F32)
  const uint u = X_bits[index];
  return ((u >> 23) & 0xffu) | ((u & 0x7fffffu) != 0u ? 0x80000000u : 0u);
#else
  const uint lo = X_bits[2u * index], hi = X_bits[2u * index + 1u];
  return ((hi >> 20) & 0x7ffu) | (((hi & 0xfffffu) | lo) != 0u ? 0x80000000u : 0u);
#endif
}

// The exponent field of v as ELEM_T stores it: 0 for zeros and subnormals, all ones for NaN and infinities.
uint exponent_bits(double v) {
#if defined(OZAKI_F32)
  return (floatBitsToUint(float(v)) >> 23) & 0xffu;
#else
  return (unpackDouble2x32(v).y >> 20) & 0x7ffu;
#endif
}
#if defined(OZAKI_F32)
const uint kExponentAllOnes = 0xffu;
const int kSubnormalMatters = 126;  // |v| < 2^-126: |v| 2^e >= 1/2 needs e >= 126
const int kExponentBias = 126;      // a normal v = f 2^x, f in [0.5, 1): x = the exponent field - 126
#else
const uint kExponentAllOnes = 0x7ffu;
const int kSubnormalMatters = 1022;
const int kExponentBias = 1022;
#endif
const uint kSubnormalSeen = 0x80000000u;

// The two 32-bit halves (hi, lo) of the integer-valued double |v| < 2^62 (hi < 2^30).
uvec2 halves(double v) {
  const double magnitude = abs(v);
  const double hi = floor(ldexp(magnitude, -32));
  return uvec2(uint(hi), uint(magnitude - ldexp(hi, 32)));
}

// v rounded to the nearest integer, ties to even, by the addition of 2^52 (whose ulp is 1) and its removal:
// two correctly rounded additions, which Vulkan requires of f64, where roundEven on lavapipe's doubles does
// not round to nearest. |v| >= 2^52 is an integer already.
double nearest_integer(double v) {
  const double magic = 4503599627370496.0;  // 2^52
  if (abs(v) >= magic) return v;
  precise double shifted = abs(v) + magic;
  precise double rounded = shifted - magic;
  return v < 0.0 ? -rounded : rounded;
}

// |v| rounded to the nearest integer (ties to even) and its halves. Below 2^51 (`small`: the line's integers
// have at most 51 bits) the rounding's own sum |v| + 2^52 holds the integer in its significand's 52 bits, so the
// halves are its bits: no conversion from double, whose throughput is a fraction of an add's on most GPUs.
struct Rounded {
  double value;
  uvec2 halves;
};
Rounded rounded_magnitude(double v, bool small) {
  const double magic = 4503599627370496.0;  // 2^52
  const double magnitude = abs(v);
  if (!small) {
    const double value = nearest_integer(magnitude);
    return Rounded(value, halves(value));
  }
  precise double shifted = magnitude + magic;
  precise double value = shifted - magic;
  const uvec2 bits = unpackDouble2x32(shifted);
  return Rounded(value, uvec2(bits.y & 0xfffffu, bits.x));
}

// 2^e as a double, for |e| <= 1022 (the two factors the split scales by): exact, where ldexp may not be cheap.
double power_of_two(int e) { return packDouble2x32(uvec2(0u, uint(e + 1023) << 20)); }

// The residue modulo m (in [0, m)) of the integer whose magnitude has the halves h, its high half below
// 2^(bits - 32). m is a constant where the moduli loop unrolls (main), so each % is a multiply and shifts, not
// a division; `bits` is uniform, so the branches cost no divergence. Up to 31 bits the high half is 0 (one
// modulo); up to 51 it is below 2^20 and h.x (2^32 mod m) + (h.y mod m) stays below 2^29 (two).
uint magnitude_residue(uvec2 h, uint m, uint bits) {
  const uint two32 = (0xffffffffu % m + 1u) % m;  // 2^32 mod m
  if (bits <= 31u) return h.y % m;
  if (bits <= 51u) return (h.x * two32 + h.y % m) % m;
  return ((h.x % m) * two32 + h.y % m) % m;
}

// The balanced residue of the integer (negative: its sign) from its magnitude's residue r in [0, m).
int balanced_residue(uint r, bool negative, uint m) {
  if (negative && r != 0u) r = m - r;
  return r >= (m + 1u) / 2u ? int(r) - int(m) : int(r);
}

// The byte of v's balanced residue modulo m = kModuli[l] (ozaki_residue.glsl), for |v| <= 2^50 (the split's
// `bits` up to 50).
// `shifted` is v + 1.5 2^52, whose ulp is 1, so the low word of its bits holds v's two's complement bits
// (2^51 + v, and 2^51 is 0 modulo 2^32): its low byte is the balanced residue modulo 256; for an odd m,
// v - m q lands in a sum with 1.5 2^52 the same way.
uint residue_byte(double value, double shifted, uint l) {
  if (kModuli[l] == 256u) return unpackDouble2x32(shifted).x & 0xffu;
  precise double residue = fma(-double(kModuli[l]), nearest_quotient(value, l), shifted);
  return unpackDouble2x32(residue).x & 0xffu;
}

// Halves shared arrays down to `group` entries, one per line: me and me + half_size are the same line's
// (half_size is a multiple of group). `sum`: the doubles are added (else their maximum) and the flags or-ed.
void reduce_lines(uint me, uint group, bool sum) {
  barrier();
  for (uint half_size = OZAKI_SPLIT_INVOCATIONS / 2u; half_size >= group; half_size /= 2u) {
    if (me < half_size) {
      largest[me] = sum ? largest[me] + largest[me + half_size] : max(largest[me], largest[me + half_size]);
      flags[me] |= flags[me + half_size];
    }
    barrier();
  }
}

void main() {
  // A workgroup walks OZAKI_SPLIT_GROUP adjacent lines at once where they are adjacent in memory (the host's
  // OZAKI_SPLIT_GROUPED): invocation `me` takes line slot = me % group along lane = me / group, so a subgroup's
  // reads cover whole 32-byte sectors of neighbouring lines instead of one element of each.
  const uint group = (p.flags & OZAKI_SPLIT_GROUPED) != 0u ? OZAKI_SPLIT_GROUP : 1u;
  const uint lanes = OZAKI_SPLIT_INVOCATIONS / group;
  const uint entry = gl_WorkGroupID.z, me = gl_LocalInvocationIndex, slot = me % group, lane = me / group;
  const uint first = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * group, line = first + slot;
  if (first >= p.M) return;  // the whole workgroup: no barrier is skipped by some invocations alone
  const bool live = line < p.M;  // a line past M walks nothing but takes every barrier
  double most = 0.0;
  uint flag = 0u;
  for (uint t = lane; live && t < p.K; t += lanes) {
    const uint index = element_index(entry, line, t);
    const uint stored = stored_class(index);
    const uint field = stored & 0x7fffffffu;
    if (field == kExponentAllOnes) flag |= OZAKI_UNCOVERED_NONFINITE;
    if (field == 0u && (stored & 0x80000000u) != 0u) flag |= kSubnormalSeen;
    most = max(most, abs(double(X[index])));
  }
  largest[me] = most;
  flags[me] = flag;
  reduce_lines(me, group, false);
  // The exponent x of the largest magnitude from its bits (frexp's, without trusting a device's frexp or its
  // subnormals): a subnormal largest (field 0) gets -1022 (-126), at most its own, and is flagged below.
  const double line_largest = largest[slot];
  const int x = int(exponent_bits(line_largest)) - kExponentBias;
  const int e = line_largest == 0.0 ? 0 : int(p.k_split) - x;
  uint uncovered = flags[slot] & ~kSubnormalSeen;
  // A subnormal matters where the scaling would make an integer of it (e >= kSubnormalMatters), and where
  // the device flushed it before the maximum saw it: a line of subnormals alone then reads as all zeros.
  // The test takes the largest candidate count's scale (p.stride_b more bits): what this split covers, every
  // candidate's covers too, so the coverage flag is final before the span guard chooses among them.
  if ((flags[slot] & kSubnormalSeen) != 0u && (e + int(p.stride_b) >= kSubnormalMatters || line_largest == 0.0)) {
    uncovered |= OZAKI_UNCOVERED_SUBNORMAL;
  }
  if (live && lane == 0u) {
    words[p.b_offset + entry * p.M + line] = e;
    // Every workgroup that finds an uncovered input stores its nonzero bits: any of them serves.
    if (uncovered != 0u) words[p.split_stride] = int(uncovered);
  }
  // Where the line is uncovered the native kernel computes this product: its planes are not read.
  const bool write = live && uncovered == 0u;
  // Four consecutive elements a word, every word of the plane's row written: bytes from K to ldc as 0, so
  // that an int8 kernel's whole-unit loads past K read zeros.
  // The scaling by 2^e in two exact steps (|e| may pass 1023; each half does not), the integers' bits uniform.
  const int e_first = e / 2;
  const double scale_first = power_of_two(e_first), scale_second = power_of_two(e - e_first);
  const uint bits = p.k_split;
  const bool small = bits <= 51u;
  const bool residues_in_fp64 = bits <= 50u;
  const double magnitude_scale = power_of_two(OZAKI_MAGNITUDE_BITS - int(bits));
  const bool guarded = (p.flags & OZAKI_SPLIT_GUARDED) != 0u;
  double norm = 0.0;
  bool inexact = false;
  uint at_least[OZAKI_MAGNITUDE_LEVELS];  // this invocation's count of magnitude bytes at each level
  [[unroll]] for (uint b = 0u; b < OZAKI_MAGNITUDE_LEVELS; ++b) at_least[b] = 0u;
  if (me < OZAKI_SPLIT_GROUP * OZAKI_MAGNITUDE_LEVELS) levels[me / OZAKI_MAGNITUDE_LEVELS][me % OZAKI_MAGNITUDE_LEVELS] = 0u;
  for (uint t4 = 4u * lane; write && t4 < p.ldc; t4 += 4u * lanes) {
    uvec2 h[4];
    bool negative[4];
    double value[4], shifted[4];  // the signed integers and their sums with 1.5 2^52 (residue_byte)
    uint magnitudes = 0u;
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
      precise double scaled = t4 + i < p.K ? (element(entry, line, t4 + i) * scale_first) * scale_second : 0.0;
      const Rounded r = rounded_magnitude(scaled, small);
      h[i] = r.halves;
      negative[i] = scaled < 0.0;
      value[i] = negative[i] ? -r.value : r.value;
      precise double shift = value[i] + kResidueShift;
      shifted[i] = shift;
      norm += abs(scaled);
      inexact = inexact || r.value != abs(scaled);
      const uint magnitude = uint(floor(abs(scaled) * magnitude_scale));  // exact: a power of two, a floor
      magnitudes |= magnitude << (8u * i);
      // Elements past K are zeros of the padding, not of the line: not counted.
      [[unroll]] for (uint b = 0u; b < OZAKI_MAGNITUDE_LEVELS; ++b) {
        at_least[b] += t4 + i < p.K && magnitude >= (1u << (OZAKI_LEVEL_SHIFT + b)) ? 1u : 0u;
      }
    }
    [[unroll]] for (uint l = 0u; l < OZAKI_MAX_MODULI; ++l) {
      if (l >= MODULI) break;
      uint word = 0u;
      [[unroll]] for (uint i = 0u; i < 4u; ++i) {
        uint byte;
        if (residues_in_fp64) {
          byte = residue_byte(value[i], shifted[i], l);
        } else {
          const uint r = magnitude_residue(h[i], kModuli[l], bits);
          byte = uint(balanced_residue(r, negative[i], kModuli[l])) & 0xffu;
        }
        word |= byte << (8u * i);
      }
      const uint byte_at = p.c_offset + (l * p.batch + entry) * p.stride_c + line * p.ldc + t4;
      planes[byte_at / 4u] = word;
    }
    if (guarded) planes[(p.c_offset + (MODULI * p.batch + entry) * p.stride_c + line * p.ldc + t4) / 4u] = magnitudes;
  }
  // The line's statistics for the span guard: its scaled 1-norm, negated where an element was rounded, and its
  // magnitude levels.
  barrier();  // every invocation has read largest[slot] and flags[slot] above, and the levels are cleared
  largest[me] = norm;
  flags[me] = inexact ? 1u : 0u;
  if (guarded) {
    [[unroll]] for (uint b = 0u; b < OZAKI_MAGNITUDE_LEVELS; ++b) {
      if (at_least[b] != 0u) atomicAdd(levels[slot][b], at_least[b]);
    }
  }
  reduce_lines(me, group, true);  // its barriers order the atomics before the stores below
  if (guarded && write && lane == 0u) {
    const uvec2 stat = unpackDouble2x32(flags[slot] != 0u ? -largest[slot] : largest[slot]);
    const uint at = p.ldb + OZAKI_LINE_WORDS * (entry * p.M + line);
    words[at] = int(stat.x);
    words[at + 1u] = int(stat.y);
    [[unroll]] for (uint b = 0u; b < OZAKI_MAGNITUDE_LEVELS; ++b) words[at + 2u + b] = int(levels[slot][b]);
    // The side's extremes (ozaki_abi.h): the fewest bytes at each level, the largest norm, any inexact line.
    const uint side = (p.flags & OZAKI_SPLIT_COLUMNS) != 0u ? OZAKI_EXTREME_WORDS : 0u;
    const uint extremes = OZAKI_EXTREME_LINES_WORD + side;
    [[unroll]] for (uint b = 0u; b < OZAKI_MAGNITUDE_LEVELS; ++b) {
      atomicMax(words[extremes + b], int(0x7fffffffu - levels[slot][b]));
    }
    atomicMax(words[extremes + OZAKI_MAGNITUDE_LEVELS], int(unpackDouble2x32(largest[slot]).y));
    if (flags[slot] != 0u) atomicMax(words[extremes + OZAKI_MAGNITUDE_LEVELS + 1u], 1);
  }
}
