#version 450
#extension GL_GOOGLE_include_directive : require
// Sums the K slices of a split-K product into C: for batch entry b (gl_WorkGroupID.z),
//   C[b][row, col] = alpha * sum over slices z of W[(b * K + z) * split_stride + row * lda + col] + beta * C,
// with the workspace W bound as A (row stride lda = N), K holding the number of slices, and C written
// through store_c (alpha, beta, ldc, the batch stride; C read only when beta != 0).
#include "gemm_interface.glsl"

layout(local_size_x = 64, local_size_y = 4) in;

void main() {
  const uint col = gl_GlobalInvocationID.x;
  const uint row = gl_GlobalInvocationID.y;
  if (row >= p.M || col >= p.N) return;
  const uint batch = gemm_batch();
  ACC_T sum = ACC_T(0);
  for (uint z = 0; z < p.K; ++z) {
    sum += ACC_T(A[p.a_offset + (batch * p.K + z) * p.split_stride + row * p.lda + col]);
  }
  store_c(batch, row, col, sum);
}
