#version 450
#extension GL_GOOGLE_include_directive : require
// The walkthroughs' naive kernel: one invocation per element of C, every operand read from global memory.
#include "gemm_interface.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1) in;

void main() {
  const uint col = gl_GlobalInvocationID.x;
  const uint row = gl_GlobalInvocationID.y;
  if (row >= p.M || col >= p.N) {
    return;  // the grid is rounded up to whole workgroups
  }
  ACC_T acc = ACC_T(0);
  for (uint k = 0; k < p.K; ++k) {
    acc += ACC_T(A[p.a_offset + row * p.lda + k]) * ACC_T(B[p.b_offset + k * p.ldb + col]);
  }
  C[p.c_offset + row * p.ldc + col] = C_T(acc);
}
