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

// The moduli (ozaki_abi.h) and fl(1/m) of each, quotients of constants that the compiler folds (glslang rounds
// them correctly): the rule above needs the correctly rounded reciprocal, which a division on the device need not
// give (Vulkan does not require a double division to round correctly), and no residue then divides at run time
// where a driver does not know a modulus (a loop over the moduli it does not unroll).
const uint kModuli[OZAKI_MAX_MODULI] = uint[](OZAKI_MODULI);
const double kReciprocal[OZAKI_MAX_MODULI] = double[](
    1.0lf / double(kModuli[0]), 1.0lf / double(kModuli[1]), 1.0lf / double(kModuli[2]), 1.0lf / double(kModuli[3]),
    1.0lf / double(kModuli[4]), 1.0lf / double(kModuli[5]), 1.0lf / double(kModuli[6]), 1.0lf / double(kModuli[7]),
    1.0lf / double(kModuli[8]), 1.0lf / double(kModuli[9]), 1.0lf / double(kModuli[10]), 1.0lf / double(kModuli[11]),
    1.0lf / double(kModuli[12]), 1.0lf / double(kModuli[13]), 1.0lf / double(kModuli[14]), 1.0lf / double(kModuli[15]),
    1.0lf / double(kModuli[16]), 1.0lf / double(kModuli[17]), 1.0lf / double(kModuli[18]), 1.0lf / double(kModuli[19]));

// The integer nearest x / m for modulus number l, m = kModuli[l] (above).
double nearest_quotient(double x, uint l) {
  precise double q = fma(x, kReciprocal[l], kResidueShift) - kResidueShift;
  return q;
}

#endif
