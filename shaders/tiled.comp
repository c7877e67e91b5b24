#version 450
#extension GL_GOOGLE_include_directive : require
// The classic tiled kernel (C++ AMP tile_static + tile_barrier, CUDA __shared__ + __syncthreads):
// a TILE x TILE workgroup stages one TILE x TILE tile of A and of B in shared memory per step along K.
// Sizes that are not tile multiples load zeros outside the matrices instead of padding copies.
#include "gemm_interface.glsl"

layout(constant_id = 0) const uint TILE = 16;
layout(local_size_x_id = 0, local_size_y_id = 0) in;

shared ELEM_T tile_a[TILE][TILE];
shared ELEM_T tile_b[TILE][TILE];

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint row = gl_WorkGroupID.y * TILE + ty;
  const uint col = gl_WorkGroupID.x * TILE + tx;
  const uint batch = gemm_batch();

  ACC_T acc = ACC_T(0);
  for (uint k0 = 0; k0 < p.K; k0 += TILE) {
    // Every invocation takes part in both barriers, in range or not.
    const uint ak = k0 + tx;
    const uint bk = k0 + ty;
    tile_a[ty][tx] = (row < p.M && ak < p.K) ? load_a(batch, row, ak) : ELEM_T(0);
    tile_b[ty][tx] = (bk < p.K && col < p.N) ? load_b(batch, bk, col) : ELEM_T(0);
    barrier();
    for (uint kk = 0; kk < TILE; ++kk) {
      acc += ACC_T(tile_a[ty][kk]) * ACC_T(tile_b[kk][tx]);
    }
    barrier();
  }
  if (row < p.M && col < p.N) {
    store_c(batch, row, col, acc);
  }
}
