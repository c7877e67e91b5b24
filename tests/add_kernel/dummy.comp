#version 450
#extension GL_GOOGLE_include_directive : require
// The dummy kernel's shader (a kernel added by docs/architecture.md's steps): one invocation per element of
// C, as the naive kernel, with its one specialization constant declared here alone.
#include "gemm_interface.glsl"

layout(constant_id = 0) const uint TILE = 16;  // both workgroup sides (the spec's launch sets it by name)
layout(local_size_x_id = 0, local_size_y_id = 0) in;

void main() {
  const uint col = gl_GlobalInvocationID.x;
  const uint row = gl_GlobalInvocationID.y;
  const uint batch = gemm_batch();
  if (row >= p.M || col >= p.N) return;
  ACC_T acc = ACC_T(0);
  for (uint k = 0; k < p.K; ++k) acc += ACC_T(load_a(batch, row, k)) * ACC_T(load_b(batch, k, col));
  store_c(batch, row, col, acc);
}
