// Residues in fp64 arithmetic, shared by the emulated product's split (ozaki_split.comp) and merge
// (ozaki_merge.comp; docs/design/ozaki.md): for an integer |x| <= 2^50 and an odd modulus m, q = rint(x fl(1/m))
// is the integer nearest x / m. fl(1/m) and the product each move x / m by a relative 2^-53 at most, together
// under 2^50 / m 2^-52 = 1 / (4m), while x / m lies at least 1 / (2m) from a half-integer (m odd), so the
// rounding by the addition and removal of 1.5 2^52 (whose ulp is 1) cannot fall the other way, whether the
// multiply-add is fused or not. Then x - m q, the balanced residue in [-(m - 1) / 2, (m - 1) / 2], is exact
// (integers below 2^51). For m = 256 the quotient is exact and a tie may round either way (a residue of +-128).
// Three double operations a residue, on the fp64 pipe beside the integer one.
#ifndef VKGEMM_OZAKI_RESIDUE_GLSL
#define VKGEMM_OZAKI_RESIDUE_GLSL

const double kResidueShift = 6755399441055744.0lf;  // 1.5 2^52

// The integer nearest x / m (above).
double nearest_quotient(double x, uint m) {
  precise double q = fma(x, 1.0lf / double(m), kResidueShift) - kResidueShift;
  return q;
}

#endif
