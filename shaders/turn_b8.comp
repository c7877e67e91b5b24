#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
// An 8-bit B turned for the cooperative-matrix kernels: for batch entry z (gl_WorkGroupID.z), the K x N
// bytes of B (the product's own: row stride ldb, b_offset, stride_b) are written N x K into the workspace,
// bound as C: row stride ldc (a multiple of 16, at least K), entry stride stride_c, zeros from K to ldc.
// The product then reads op(B) with K contiguous (its TRANS_B path), the order an int8 fragment of B is
// made of; a row-major int8 B needs a byte transpose per fragment load instead (engine/src/kernels/turn_b.cpp
// says when the turn pays). The values are moved as bits: one variant serves i8 and u8.
//
// A workgroup turns a SIDE x SIDE block (K x N) through shared memory. Each invocation reads 16 bytes
// along N from each of four consecutive rows (16-byte loads where B's rows and offsets allow them, bytes
// otherwise), transposes the 4 x 16 bytes in registers into 16 words of four K-consecutive bytes, one per
// column, and stores them in the block; then the block's rows are written 16 bytes at a time along K.
#include "gemm_interface.glsl"

layout(local_size_x = GEMM_TURN_INVOCATIONS) in;

// The same bindings as B and C, seen as 16-byte units for the wide loads and the stores.
layout(std430, set = 0, binding = 1) readonly buffer MatrixBUnits { uvec4 b_units[]; };
layout(std430, set = 0, binding = 2) writeonly buffer MatrixCUnits { uvec4 c_units[]; };

const uint SIDE = GEMM_TURN_SIDE;
const uint QUADS = SIDE / 4;              // four-row groups along K: words in a row of the turned block
const uint UNITS = SIDE / 16;             // 16-byte pieces along N; 16-byte units in a row of the turned block
const uint WRITE_ROWS = GEMM_TURN_INVOCATIONS / UNITS;  // rows of the turned block written at once
// [n][k / 4]; a warp's stores have consecutive quads (consecutive banks); the extra word puts the four
// words an invocation reads back at other banks than its neighbours' rows.
shared uint block[SIDE][QUADS + 1];

// The 4 x 4 bytes of four rows (a word each, byte j of a word is column j) as four columns (a word each,
// byte i of a word is row i).
uvec4 transpose_4x4(uvec4 rows) {
  const uint lo01 = (rows.x & 0x00ff00ffu) | ((rows.y & 0x00ff00ffu) << 8);  // x0 y0 x2 y2
  const uint hi01 = ((rows.x >> 8) & 0x00ff00ffu) | (rows.y & 0xff00ff00u);  // x1 y1 x3 y3
  const uint lo23 = (rows.z & 0x00ff00ffu) | ((rows.w & 0x00ff00ffu) << 8);  // z0 w0 z2 w2
  const uint hi23 = ((rows.z >> 8) & 0x00ff00ffu) | (rows.w & 0xff00ff00u);  // z1 w1 z3 w3
  return uvec4((lo01 & 0xffffu) | (lo23 << 16), (hi01 & 0xffffu) | (hi23 << 16), (lo01 >> 16) | (lo23 & 0xffff0000u),
               (hi01 >> 16) | (hi23 & 0xffff0000u));
}

// Bytes n .. n + 15 of row k of this entry's B (src: the entry's first byte), zeros outside K x N.
uvec4 read_piece(uint src, uint k, uint n, bool wide) {
  if (k >= p.K) return uvec4(0);
  const uint at = src + k * p.ldb + n;
  if (wide && n + 16 <= p.N) return b_units[at / 16];
  uvec4 v = uvec4(0);
  [[unroll]] for (uint i = 0; i < 16; ++i) {
    if (n + i < p.N) v[i / 4] |= uint(B[at + i]) << (8 * (i % 4));
  }
  return v;
}

void main() {
  const uint n0 = gl_WorkGroupID.x * SIDE, k0 = gl_WorkGroupID.y * SIDE, t = gl_LocalInvocationIndex;
  const uint src = p.b_offset + gl_WorkGroupID.z * p.stride_b;
  // 16-byte loads need every row of B to start on a 16-byte boundary.
  const bool wide = ((src | p.ldb) & 15u) == 0u;
  // Read and turn: invocation t takes quad t % QUADS (rows 4 quad .. 4 quad + 3) and piece t / QUADS.
  const uint quad = t % QUADS, piece = t / QUADS, k = k0 + 4 * quad, n = n0 + 16 * piece;
  uvec4 rows[4];
  [[unroll]] for (uint r = 0; r < 4; ++r) rows[r] = read_piece(src, k + r, n, wide);
  [[unroll]] for (uint w = 0; w < 4; ++w) {
    const uvec4 columns = transpose_4x4(uvec4(rows[0][w], rows[1][w], rows[2][w], rows[3][w]));
    [[unroll]] for (uint j = 0; j < 4; ++j) block[16 * piece + 4 * w + j][quad] = columns[j];
  }
  barrier();
  // Write: UNITS invocations a row of the turned block, 16 bytes along K each.
  const uint unit = t % UNITS;
  [[unroll]] for (uint pass = 0; pass < SIDE / WRITE_ROWS; ++pass) {
    const uint n_local = t / UNITS + WRITE_ROWS * pass, n_out = n0 + n_local, k_out = k0 + 16 * unit;
    if (n_out < p.N && k_out < p.ldc) {
      const uint q = 4 * unit;
      c_units[(gl_WorkGroupID.z * p.stride_c + n_out * p.ldc + k_out) / 16] =
          uvec4(block[n_local][q], block[n_local][q + 1], block[n_local][q + 2], block[n_local][q + 3]);
    }
  }
}
