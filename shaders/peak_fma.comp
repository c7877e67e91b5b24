#version 450
#extension GL_EXT_control_flow_attributes : enable
// vkgemm peak: FMA throughput (engine/src/peak/peak.cpp). Built for f32 (vec4), with PEAK_F16 for f16
// (f16vec4: packed half arithmetic, two f16vec2 per instruction where the hardware pairs them) and with
// PEAK_F64 for f64 (dvec4; needs shaderFloat64, the ceiling of the blocked kernel's f64 variant).
//
// Each invocation runs CHAINS (a specialization constant) independent chains of 4-wide FMAs, x = x * mul + add, UNROLL of each per
// loop iteration and p.K iterations: 2 * 4 * CHAINS * UNROLL * K FLOPs per invocation. mul and add come
// from the push constants (alpha and beta of the GEMM block), so nothing can be folded; with mul = -0.5 and
// add = 1 every chain settles on 2/3, far from overflow and from denormals (slow on some CPUs). The sum of
// the chains goes to C, one vec4 per invocation, so none of the work is dead.
#ifdef PEAK_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define S float16_t
#define V f16vec4
#elif defined(PEAK_F64)
#define S double
#define V dvec4
#else
#define S float
#define V vec4
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;  // the workgroup size (set by name, as every constant)

// The bindings and push-constant block every vkgemm pipeline shares (gemm_interface.glsl), read here as:
// K, the loop count, and alpha and beta (floats for f32 and f16 inputs alike) as mul and add.
layout(std430, set = 0, binding = 2) writeonly buffer Out { vec4 result[]; };
layout(push_constant) uniform PeakParams {
  layout(offset = 8) uint K;
  layout(offset = 64) float mul;
  float add;
} p;

// Independent chains per invocation, a specialization constant: 8 on a GPU (ILP beside occupancy); fewer on a
// CPU driver, whose 16 vector registers hold lavapipe's 8 lanes of each (8 chains spill there, 2 do not).
layout(constant_id = 1) const uint CHAINS = 8;
const uint UNROLL = 16;

void main() {
  const V mul = V(S(p.mul)), add = V(S(p.add));
  const S seed = S(float(gl_LocalInvocationID.x & 7u) * 0.125);
  V x[CHAINS];
  [[unroll]] for (uint c = 0; c < CHAINS; ++c) x[c] = V(seed) + V(S(c));
  for (uint i = 0; i < p.K; ++i) {
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      [[unroll]] for (uint c = 0; c < CHAINS; ++c) x[c] = fma(x[c], mul, add);
    }
  }
  V sum = x[0];
  [[unroll]] for (uint c = 1; c < CHAINS; ++c) sum += x[c];
  result[gl_GlobalInvocationID.x] = vec4(sum);
}
