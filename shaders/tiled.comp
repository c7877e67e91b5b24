#version 450
#extension GL_GOOGLE_include_directive : require
// The classic tiled kernel (C++ AMP tile_static + tile_barrier, CUDA __shared__ + __syncthreads):
// a TILE x TILE workgroup stages one TILE x TILE tile of A and of B in shared memory per step along K.
// Sizes that are not tile multiples load zeros outside the matrices instead of padding copies.
//
// TILED_DOT8 (i8 and u8 where the device has shaderIntegerDotProduct): each shared word holds four
// consecutive K elements of a row of op(A) or a column of op(B), one byte each (K fastest), and one packed
// dot product adds their four products to the 32-bit sum (a DP4A where the hardware has one), so a step
// covers 4 x TILE of K. The sums wrap modulo 2^32 as the plain form's do.
#ifdef TILED_DOT8
#extension GL_EXT_integer_dot_product : require
#endif
#include "gemm_interface.glsl"

layout(constant_id = 0) const uint TILE = 16;
layout(local_size_x_id = 0, local_size_y_id = 0) in;

#ifndef TILED_DOT8
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
#else
shared uint tile_a[TILE][TILE];  // [row][k / 4]: four K elements a word
shared uint tile_b[TILE][TILE];  // [k / 4][col]

// Four elements as the bytes of a word, the first lowest; zeros outside the matrices. load_a and load_b
// widen each element (sign or zero extension); its low byte is the element's own bits.
uint packed_a(uint batch, uint row, uint k) {
  uint word = 0u;
  for (uint j = 0; j < 4u; ++j) {
    if (row < p.M && k + j < p.K) word |= (uint(load_a(batch, row, k + j)) & 0xffu) << (8u * j);
  }
  return word;
}

uint packed_b(uint batch, uint k, uint col) {
  uint word = 0u;
  for (uint j = 0; j < 4u; ++j) {
    if (k + j < p.K && col < p.N) word |= (uint(load_b(batch, k + j, col)) & 0xffu) << (8u * j);
  }
  return word;
}

// The four products of two words summed in 32 bits: signed bytes for i8, unsigned for u8.
int dot4(uint a, uint b) {
#ifdef VKGEMM_DOT_UNSIGNED
  return int(dotPacked4x8EXT(a, b));
#else
  return dotPacked4x8EXT(int(a), int(b));
#endif
}

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint row = gl_WorkGroupID.y * TILE + ty;
  const uint col = gl_WorkGroupID.x * TILE + tx;
  const uint batch = gemm_batch();

  int acc = 0;
  for (uint k0 = 0; k0 < p.K; k0 += 4u * TILE) {
    // Every invocation takes part in both barriers, in range or not.
    tile_a[ty][tx] = packed_a(batch, row, k0 + 4u * tx);
    tile_b[ty][tx] = packed_b(batch, k0 + 4u * ty, col);
    barrier();
    for (uint kk = 0; kk < TILE; ++kk) {
      acc += dot4(tile_a[ty][kk], tile_b[kk][tx]);
    }
    barrier();
  }
  if (row < p.M && col < p.N) {
    store_c(batch, row, col, acc);
  }
}
#endif
