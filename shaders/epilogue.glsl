// The fused epilogue every GEMM kernel applies at its one store of C (gemm_abi.h's GEMM_ACT_* and
// GEMM_BIAS_* describe the push constants' `epilogue` word; vkgemm::Epilogue in blas.hpp is the API):
//   y = activation(x + bias),  x = alpha * acc + beta * C, in the epilogue's type EPI_T (the sums' precision:
// float for f32, f16 and bf16 inputs, double for f64), before the store's conversion to C's type.
// Included by gemm_interface.glsl after the push-constant block. Integer variants (VKGEMM_NO_EPILOGUE) have
// none: the door refuses an epilogue on integer C; the dequantizing int8 variants (VKGEMM_DEQUANT, float C)
// have it, in fp32, and dequant_scale besides. Every function here is the only one of its kind: the
// kernels call gemm_epilogue and nothing else.
//
// The transcendental activations use exp alone (Vulkan's exp errs by at most 3 + 2|x| ulp), each written so
// that no intermediate overflows into a NaN: tanh from exp(-2|x|), GELU's tanh form as a sigmoid, its erf by Abramowitz and Stegun 7.1.26
// (absolute error under 1.5e-7). reference/epilogue.cpp bounds what that costs (docs/correctness.md).
#ifndef VKGEMM_NO_EPILOGUE
// EPI_T is gemm_interface.glsl's (its push constants carry the parameters in it).

layout(std430, set = 0, binding = GEMM_BIAS_BINDING) readonly buffer EpilogueBias { uint BIAS[]; };
layout(constant_id = GEMM_EPILOGUE_CONSTANT_ID) const uint EPILOGUE = 0;

// Whether this dispatch applies an epilogue: the pipeline's EPILOGUE (0 compiles every epilogue out) and the
// push constants' word (uniform). The kernels test this, never the word alone.
bool epilogue_on() { return EPILOGUE != 0u && p.epilogue != 0u; }

// The epilogue's word as the pipeline was specialized for (gemm_abi.h, GEMM_EPILOGUE_CONSTANT_ID): the host
// makes it equal to the push constants' word, so the activation's and the bias type's switches fold away and
// only one activation's code reaches the store.
const uint kEpilogue = EPILOGUE;
// Its fields: the bias's axis (GEMM_BIAS_COLUMN, GEMM_BIAS_ROW or 0: none), its stored type, the activation.
const uint kBiasAxis = kEpilogue & (GEMM_BIAS_COLUMN | GEMM_BIAS_ROW);
const uint kBiasType = (kEpilogue >> GEMM_BIAS_TYPE_SHIFT) & 3u;
const uint kActivation = kEpilogue & GEMM_ACT_MASK;

// Bias element i (from the binding's start) as EPI_T, decoded from its stored type.
EPI_T epilogue_bias(uint i) {
#ifdef VKGEMM_EPILOGUE_DOUBLE
  if (kBiasType == GEMM_BIAS_F64) return packDouble2x32(uvec2(BIAS[2u * i], BIAS[2u * i + 1u]));
#endif
  if (kBiasType == GEMM_BIAS_F16) return EPI_T(unpackHalf2x16(BIAS[i >> 1u])[i & 1u]);
  if (kBiasType == GEMM_BIAS_BF16) {
    const uint w = BIAS[i >> 1u];
    return EPI_T(uintBitsToFloat((i & 1u) != 0u ? (w & 0xffff0000u) : (w << 16u)));
  }
  return EPI_T(uintBitsToFloat(BIAS[i]));
}

#ifndef VKGEMM_EPILOGUE_DOUBLE
// Every exp here takes its argument clamped to [-44, 44] (e^44 is about 2^63.5), so that its result, and a
// divisor 1 + exp(a), stay finite normal floats on any GPU: no division meets its special cases and no exp
// a subnormal result. Above, the result moves by at most |x| e^-44, far inside the bound; below, 1 +- e^-44
// and poly * e^-44 already round to the float the exact value rounds to in each use below: nothing moves.
// (What it was measured to cost and save: docs/design/epilogue.md.)
const float kExpCap = 44.0;
float epilogue_exp(float a) { return exp(clamp(a, -kExpCap, kExpCap)); }

float epilogue_sigmoid(float x) { return 1.0 / (1.0 + epilogue_exp(-x)); }

float epilogue_tanh(float x) {
  const float e = epilogue_exp(-2.0 * abs(x));
  const float t = (1.0 - e) / (1.0 + e);
  return x < 0.0 ? -t : t;
}

float epilogue_erf(float x) {
  const float z = abs(x);
  const float t = 1.0 / (1.0 + 0.3275911 * z);
  const float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const float r = 1.0 - poly * epilogue_exp(-z * z);
  return x < 0.0 ? -r : r;
}
#endif

EPI_T epilogue_activation(EPI_T x, uint act) {
  switch (act) {
    case GEMM_ACT_RELU: return max(x, EPI_T(0));
    case GEMM_ACT_LEAKY_RELU: return x >= EPI_T(0) ? x : p.act_a * x;
    case GEMM_ACT_CLAMP: return min(max(x, p.act_a), p.act_b);
#ifndef VKGEMM_EPILOGUE_DOUBLE  // the door refuses these on f64: GLSL has no double exp
    // 0.5 x (1 + tanh(u)) is x / (1 + exp(-2u)): one exp and one division, and no cancellation in 1 + tanh(u)
    // for negative x; the cap (above) gives x e^-44 where GELU is below that, about -0.
    case GEMM_ACT_GELU_TANH: return x / (1.0 + epilogue_exp(-1.5957691216 * (x + 0.044715 * x * x * x)));
    case GEMM_ACT_GELU_ERF: return 0.5 * x * (1.0 + epilogue_erf(0.7071067812 * x));
    case GEMM_ACT_SILU: return x * epilogue_sigmoid(x);
    case GEMM_ACT_SIGMOID: return epilogue_sigmoid(x);
    case GEMM_ACT_TANH: return epilogue_tanh(x);
#endif
#ifdef VKGEMM_EXTRA_ACTIVATIONS_GLSL
    // Activations a build adds after the list (vkgemm/names.hpp's VKGEMM_EXTRA_ACTIVATIONS): none, except in
    // the build of tests/add_activation/, whose file holds the test activation's number and case.
#include "extra_activations.glsl"
#endif
    default: return x;
  }
}

// The epilogue of element (row, col) of this dispatch's row-major problem; x = alpha * acc + beta * C.
// Call only where epilogue_on() (a uniform branch: the plain product's stores stay as they were).
EPI_T gemm_epilogue(EPI_T x, uint row, uint col) {
  if (kBiasAxis != 0u) x += epilogue_bias(p.bias_offset + ((kBiasAxis & GEMM_BIAS_COLUMN) != 0u ? col : row));
  return epilogue_activation(x, kActivation);
}

#ifdef VKGEMM_DEQUANT
// The dequantization scale of element (row, col) of this dispatch's row-major problem: its column's (or,
// once the column-major turn swapped them, its row's) f32 from binding 3, or 1 (the per-tensor scale is in
// alpha). The kernels multiply the fp32 sum by it, then by alpha, before beta C and the epilogue.
float dequant_scale(uint row, uint col) {
  if (p.scale == 0u) return 1.0;
  return uintBitsToFloat(BIAS[p.scale_offset + (p.scale == GEMM_SCALE_COLUMN ? col : row)]);
}
#endif

#else
bool epilogue_on() { return false; }  // integer variants: the door refuses an epilogue on integer C
#endif  // VKGEMM_NO_EPILOGUE
