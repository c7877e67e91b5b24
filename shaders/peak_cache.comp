#version 450
#extension GL_EXT_control_flow_attributes : enable
// vkgemm peak: the bandwidth of reads served by the last-level cache (engine/src/peak/peak.cpp), the path a
// GEMM's tiles take from L2 into each SM. A buffer of p.M uvec4 (a power of two; the host sizes it well
// above an SM's L1 and well below the L2) is read over and over: invocation g reads index g + j * p.N
// (mod p.M) at its j-th read, so a subgroup's reads are contiguous (16 bytes an invocation), and with p.N an
// odd multiple of the workgroup size each workgroup walks every workgroup-sized block of the buffer before
// it comes back to one: an SM's working set is the whole buffer, more than its L1 holds. p.K passes of
// UNROLL reads each; the reads' bits are XORed and written, one uvec4 per invocation, so none is dead (and
// the peak suite checks the XOR against the host's).
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;  // the workgroup size (set by name, as every constant)

layout(std430, set = 0, binding = 0) readonly buffer In { uvec4 src[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uvec4 dst[]; };
// The shared push-constant block (gemm_interface.glsl) read as: M the buffer's uvec4 (a power of two), N the
// stride between an invocation's reads, K the passes.
layout(push_constant) uniform PeakParams { uint M, N, K; } p;
const uint UNROLL = 8;  // peak.cpp's kCacheUnroll

void main() {
  const uint mask = p.M - 1u;
  uint at = gl_GlobalInvocationID.x & mask;
  uvec4 x = uvec4(0);
  for (uint i = 0; i < p.K; ++i) {
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      x ^= src[at];
      at = (at + p.N) & mask;
    }
  }
  dst[gl_GlobalInvocationID.x] = x;
}
