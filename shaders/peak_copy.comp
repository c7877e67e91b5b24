#version 450
// vkgemm peak: device-memory copy bandwidth (engine/src/peak/peak.cpp). C = A, 16 bytes per load and per
// store, p.M vec4 in all, grid-stride so that any workgroup count covers it.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;  // the workgroup size (set by name, as every constant)

layout(std430, set = 0, binding = 0) readonly buffer In { vec4 src[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { vec4 dst[]; };
// The shared push-constant block (gemm_interface.glsl): M is the number of vec4 to copy.
layout(push_constant) uniform PeakParams { uint M; } p;

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.M; i += stride) dst[i] = src[i];
}
