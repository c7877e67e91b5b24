#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
// An 8-bit B turned for the cooperative-matrix kernels: for batch entry z (gl_WorkGroupID.z), the K x N
// bytes of B (the product's own: row stride ldb, b_offset, stride_b) are written N x K into the workspace,
// bound as C: row stride ldc (a multiple of 16, at least K), entry stride stride_c, zeros from K to ldc.
// The product then reads op(B) with K contiguous (its TRANS_B path), the order an int8 fragment of B is
// made of; a row-major int8 B needs a byte transpose per fragment load instead (engine/src/kernels/turn_b.cpp
// says when the turn pays). The values are moved as bits: one variant serves i8 and u8.
// A workgroup turns a 64 x 64 block through shared memory, reading along N and writing along K, four
// K-consecutive bytes to a word.
#include "gemm_interface.glsl"

layout(local_size_x = GEMM_TURN_INVOCATIONS) in;

const uint SIDE = GEMM_TURN_SIDE;
const uint QUADS = SIDE / 4;  // words along K in a block
const uint READ_QUADS = GEMM_TURN_INVOCATIONS / SIDE;    // quads of rows read at once: each invocation a column
const uint WRITE_ROWS = GEMM_TURN_INVOCATIONS / QUADS;   // rows of the turned block written at once
shared uint block[SIDE][QUADS + 1];  // [n][k / 4]; the extra word spreads consecutive rows over the banks

void main() {
  const uint n0 = gl_WorkGroupID.x * SIDE, k0 = gl_WorkGroupID.y * SIDE, t = gl_LocalInvocationIndex;
  const uint src = p.b_offset + gl_WorkGroupID.z * p.stride_b;
  // Read: each invocation one column, a word of four rows at a time; SIDE invocations read SIDE bytes of a row.
  const uint n_read = t % SIDE;
  [[unroll]] for (uint w = 0; w < QUADS / READ_QUADS; ++w) {
    const uint quad = t / SIDE + READ_QUADS * w;
    uint word = 0;
    [[unroll]] for (uint r = 0; r < 4; ++r) {
      const uint k = k0 + 4 * quad + r, n = n0 + n_read;
      if (k < p.K && n < p.N) word |= uint(B[src + k * p.ldb + n]) << (8 * r);
    }
    block[n_read][quad] = word;
  }
  barrier();
  // Write: QUADS invocations a row of the turned block, SIDE bytes along K.
  const uint quad = t % QUADS;
  [[unroll]] for (uint w = 0; w < SIDE / WRITE_ROWS; ++w) {
    const uint n_local = t / QUADS + WRITE_ROWS * w, n = n0 + n_local, k = k0 + 4 * quad;
    if (n < p.N && k < p.ldc) C[(gl_WorkGroupID.z * p.stride_c + n * p.ldc + k) / 4] = C_T(block[n_local][quad]);
  }
}
