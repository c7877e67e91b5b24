#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
// The emulated product's merge (docs/design/ozaki.md; engine/src/ozaki/model.cpp `model_product` and
// `reconstruct` are the same arithmetic on the host): one invocation per element (i, j) of C of one batch
// entry reads each int32 plane once (every K chunk of every modulus), reduces it modulo its modulus, turns
// the residues into Garner's balanced mixed-radix digits (exact small integers), evaluates
// C' = v_0 + p_0 (v_1 + p_1 (v_2 + ...)) by compensated Horner in double, scales it back by 2^-(e_i + f_j)
// and writes alpha C' + beta C0 (C0 not read when beta = 0) as C_T. Nothing is written when the coverage
// flag is set: the native kernel computes that product. ozaki_abi.h says what each push constant means here.
#include "gemm_abi.h"
#include "ozaki_abi.h"
#include "ozaki_residue.glsl"

layout(local_size_x = OZAKI_MERGE_X, local_size_y = OZAKI_MERGE_Y) in;
layout(constant_id = 0) const uint MODULI = 14;

layout(std430, set = 0, binding = 0) readonly buffer Sums { int sums[]; };    // the int32 planes
layout(std430, set = 0, binding = 1) readonly buffer Words { int words[]; };  // exponents, the coverage flag
layout(std430, set = 0, binding = 2) buffer MatrixC { C_T C[]; };          // read only when beta != 0

#define GEMM_PUSH_UINT_FIELD(name) uint name;
layout(push_constant) uniform GemmParams {
  GEMM_PUSH_UINT_FIELDS(GEMM_PUSH_UINT_FIELD)
  layout(offset = GEMM_PUSH_SCALARS_OFFSET) double alpha;
  double beta;
} p;

const uint kInverse[OZAKI_MAX_MODULI] = uint[](OZAKI_GARNER_INVERSES);
const uint kWeight[OZAKI_MAX_MODULI * OZAKI_MAX_MODULI] = uint[](OZAKI_GARNER_WEIGHTS);

// A residue of the integer x (|x| <= 2^50) modulo m = kModuli[l] in [-m/2, m/2] (ozaki_residue.glsl): the
// balanced one for an odd m. Three double operations on the fp64 pipe, where the integer modulo with its sign
// took about eight on the integer pipes.
double residue(double x, uint l) {
  precise double r = fma(-double(kModuli[l]), nearest_quotient(x, l), x);
  return r;
}

// The int32 v as a double without a conversion instruction: 2^52 + 2^31 + v from its bits, less 2^52 + 2^31.
double exact_double(int v) {
  precise double biased = packDouble2x32(uvec2(uint(v) ^ 0x80000000u, 0x43300000u));
  precise double x = biased - 4503601774854144.0lf;  // 2^52 + 2^31
  return x;
}

// The integer r (|r| < 2^31) as an int from the low word of r + 1.5 2^52, whose ulp is 1.
int exact_int(double r) {
  precise double shifted = r + kResidueShift;
  return int(unpackDouble2x32(shifted).x);
}

// C' from the residues (each in [-p_j / 2, p_j / 2]): Garner's digits, then compensated Horner.
double reconstruct(int y[OZAKI_MAX_MODULI]) {
  int digit[OZAKI_MAX_MODULI];
  [[unroll]] for (uint j = 0u; j < OZAKI_MAX_MODULI; ++j) {
    if (j >= MODULI) break;
    const uint m = kModuli[j];
    // Digit j is (y_j inverse_j - sum_i weight_ji v_i) mod m with the weights already times inverse_j (the
    // table): one modulo a digit on the chain from one digit to the next, in fp64 arithmetic for an odd m (the
    // residue is then the balanced one), by a mask for 256. |below| < 19 * 128 * 255 < 2^20 and
    // |y_j inverse_j| < 2^15: every value an exact double.
    int below = 0;
    [[unroll]] for (uint i = 0u; i < OZAKI_MAX_MODULI; ++i) {
      if (i >= j) break;
      below += digit[i] * int(kWeight[j * OZAKI_MAX_MODULI + i]);
    }
    const int value = y[j] * int(kInverse[j]) - below;
    digit[j] = m == 256u ? ((value + 128) & 255) - 128 : exact_int(residue(exact_double(value), j));
  }
  // Three digits at a time make one exact int32 D_g = v_3g + p_3g (v_3g+1 + p_3g+1 v_3g+2), |D_g| <= R_g / 2 with
  // R_g = p_3g p_3g+1 p_3g+2 < 2^24, so C' = D_0 + R_0 (D_1 + R_1 (D_2 + ...)): a third of the Horner steps.
  const uint groups = (MODULI + 2u) / 3u;
  int group_value[(OZAKI_MAX_MODULI + 2) / 3];
  [[unroll]] for (uint g = 0u; g < (OZAKI_MAX_MODULI + 2u) / 3u; ++g) {
    if (g >= groups) break;
    int v = 0;
    [[unroll]] for (int t = 2; t >= 0; --t) {
      if (3u * g + uint(t) < MODULI) v = digit[3u * g + uint(t)] + int(kModuli[3u * g + uint(t)]) * v;
    }
    group_value[g] = v;
  }
  // s R split exactly without fma (Vulkan does not require fma to be fused, and lavapipe's is not):
  // Veltkamp's split makes s = hi + lo with hi of 26 bits and lo of 27, so hi R and lo R (R < 2^24) are exact;
  // Fast2Sum adds them and then D_g, each error exact (|s R| >= R >= 2 |D_g| whenever s != 0). `precise`: no
  // contraction, no reassociation.
  precise double s = double(group_value[groups - 1u]);
  precise double c = 0.0;
  [[unroll]] for (int g = (OZAKI_MAX_MODULI + 2) / 3 - 2; g >= 0; --g) {
    if (uint(g) + 1u >= groups) continue;
    const double m = double(kModuli[3 * g]) * double(kModuli[3 * g + 1]) * double(kModuli[3 * g + 2]);
    const double d = double(group_value[g]);
    precise double gamma = s * 134217729.0;  // 2^27 + 1
    precise double hi = gamma - (gamma - s);
    precise double lo = s - hi;
    precise double high = hi * m;
    precise double low = lo * m;
    precise double product = high + low;
    precise double product_error = low - (product - high);
    precise double sum = product + d;
    precise double sum_error = d - (sum - product);
    c = c * m + (product_error + sum_error);
    s = sum;
  }
  precise double result = s + c;
  return result;
}

void main() {
  const uint j = gl_GlobalInvocationID.x, i = gl_GlobalInvocationID.y, entry = gl_WorkGroupID.z;
  if (i >= p.M || j >= p.N) return;
  const uint moduli = p.ldb, plane = entry * p.stride_a + i * p.lda + j;
  // Every load first, the coverage flag and the exponents among them, so that no load waits on another's
  // answer: the flag is tested only before the store (the planes are garbage where it is set).
  int raw[OZAKI_MAX_MODULI];
  [[unroll]] for (uint l = 0u; l < OZAKI_MAX_MODULI; ++l) {
    if (l >= MODULI) break;
    raw[l] = sums[p.a_offset + plane + l * p.batch * p.stride_a];
  }
  const bool uncovered = words[p.split_stride] != 0;
  const int e = words[p.b_offset + entry * p.k_split + i] + words[p.stride_b + entry * p.N + j];
  // The loops over the moduli hold no loop of their own, so that a driver unrolls them and every array stays in
  // registers: the K chunks past the first (K past kChunkK) are a loop around them.
  int y[OZAKI_MAX_MODULI];
  [[unroll]] for (uint l = 0u; l < OZAKI_MAX_MODULI; ++l) {
    if (l >= MODULI) break;
    y[l] = exact_int(residue(exact_double(raw[l]), l));
  }
  for (uint chunk = 1u; chunk < p.K; ++chunk) {  // each chunk's residues summed into y's
    [[unroll]] for (uint l = 0u; l < OZAKI_MAX_MODULI; ++l) {
      if (l >= MODULI) break;
      const int sum = sums[p.a_offset + plane + ((chunk * moduli + l) * p.batch) * p.stride_a];
      y[l] = exact_int(residue(exact_double(y[l]) + residue(exact_double(sum), l), l));
    }
  }
  if (uncovered) return;
  const int e_first = -e / 2;
  precise double product = ldexp(ldexp(reconstruct(y), e_first), -e - e_first);
  precise double r = p.alpha * product;
  const uint at = p.c_offset + entry * p.stride_c + i * p.ldc + j;
  if ((p.flags & GEMM_BETA_ZERO) == 0u) r = r + p.beta * double(C[at]);
  C[at] = C_T(r);
}
