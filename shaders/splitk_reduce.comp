#version 450
#extension GL_GOOGLE_include_directive : require
// Sums the K-slices of a split-K product: C[row, col] = sum over z of W[z * split_stride + row * lda + col],
// with the workspace W bound as A and K holding the number of slices.
#include "gemm_interface.glsl"

layout(local_size_x = 64, local_size_y = 4) in;

void main() {
  const uint col = gl_GlobalInvocationID.x;
  const uint row = gl_GlobalInvocationID.y;
  if (row >= p.M || col >= p.N) return;
  ACC_T sum = ACC_T(0);
  for (uint z = 0; z < p.K; ++z) sum += ACC_T(A[p.a_offset + z * p.split_stride + row * p.lda + col]);
  C[p.c_offset + row * p.ldc + col] = ELEM_T(sum);
}
