#version 450
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_integer_dot_product : require
// vkgemm peak: int8 dot-product throughput (VK_KHR_shader_integer_dot_product; engine/src/peak/peak.cpp).
// Each invocation runs CHAINS independent chains of x = dot(bytes of x, bytes of m) + x: four signed 8-bit
// products summed into a 32-bit integer (a DP4A where the hardware has one), UNROLL of each per loop
// iteration and p.K iterations: 8 * CHAINS * UNROLL * K integer operations (4 multiplies, 4 adds) per
// invocation. m comes from the push constants (alpha's bits), so nothing can be folded; every step reads
// the chain's own last value, so nothing can be hoisted. Integers wrap; the chains' sum goes to C, so none
// of the work is dead.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;  // the workgroup size (set by name, as every constant)

layout(std430, set = 0, binding = 2) writeonly buffer Out { int result[]; };
layout(push_constant) uniform PeakParams {
  layout(offset = 8) uint K;
  layout(offset = 64) uint m;  // four signed bytes
} p;

layout(constant_id = 1) const uint CHAINS = 8;
const uint UNROLL = 16;

void main() {
  int x[CHAINS];
  [[unroll]] for (uint c = 0; c < CHAINS; ++c) x[c] = int(gl_LocalInvocationID.x * 0x01030507u + c);
  for (uint i = 0; i < p.K; ++i) {
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      [[unroll]] for (uint c = 0; c < CHAINS; ++c) x[c] += dotPacked4x8EXT(x[c], int(p.m));
    }
  }
  int sum = x[0];
  [[unroll]] for (uint c = 1; c < CHAINS; ++c) sum += x[c];
  result[gl_GlobalInvocationID.x] = sum;
}
