#version 450
#extension GL_GOOGLE_include_directive : require
// The naive kernel: one invocation per element of C, every operand read from global memory.
#include "gemm_interface.glsl"

layout(local_size_x_id = NAIVE_SC_WG_X, local_size_y_id = NAIVE_SC_WG_Y) in;

void main() {
  const uint col = gl_GlobalInvocationID.x;
  const uint row = gl_GlobalInvocationID.y;
  const uint batch = gemm_batch();
  if (row >= p.M || col >= p.N) {
    return;  // the grid is rounded up to whole workgroups
  }
  ACC_T acc = ACC_T(0);
  for (uint k = 0; k < p.K; ++k) {
    acc += ACC_T(load_a(batch, row, k)) * ACC_T(load_b(batch, k, col));
  }
  store_c(batch, row, col, acc);
}
