#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// The register-blocked kernel. A workgroup computes a BM x BN block of C; each invocation accumulates a
// TM x TN sub-block in registers, as TM/4 x TN/4 groups of 4x4 spread over the block so that neighbouring
// invocations read neighbouring vectors of shared memory. Per step along K, the workgroup stages a BK x BM
// tile of op(A) (A transposed, tile_a[k][m], so that the inner loop reads vec4s of A along m) and a BK x BN
// tile of op(B) (tile_b[k][n]), in two shared buffers: the next tile is fetched from global memory into
// registers while the current one is multiplied, and one barrier per step suffices. Every tile parameter is a
// specialization constant.
//
// Every op combination: each global vec4 runs along the stored operand's contiguous dimension, so that
// neighbouring invocations read neighbouring vec4s (coalesced), and staging puts it where the inner loop
// wants it. A untransposed (M x K, row stride lda): vec4 along k, scattered into tile_a column-wise. A
// transposed (stored K x M): vec4 along m, stored straight into a row of tile_a. B untransposed (K x N):
// vec4 along n, straight into a row of tile_b. B transposed (stored N x K): vec4 along k, scattered into
// tile_b column-wise. A scattered tile gets a vec4 of padding per row (A_PAD, B_PAD: the host sets them where
// the operand is scattered and they fit) against bank conflicts. The transposes are specialization
// constants (TRANS_A, TRANS_B) rather than a branch on the push constants' GEMM_TRANS_* flags: pipelines are
// keyed by their constants' values, so each op combination gets its own pipeline (four at most per
// configuration, built on first use) whose compiler has removed the other paths, and the fast loop holds no
// branch on the layout.
//
// Fast path: vec4 global loads without bounds checks, taken by workgroups whose block lies inside the
// matrices when strides and offsets allow vec4 access (GEMM_VEC_A / GEMM_VEC_B in the flags: the stored
// operand's row stride, offset and batch stride are multiples of 4, whichever way it is read; a run-time
// choice, uniform over the dispatch, so one pipeline serves every alignment). Workgroups on the edges load
// element by element with bounds checks and zeros outside. The choice is uniform across a workgroup, so
// nothing diverges.
//
// BLAS semantics through gemm_interface.glsl: batch entries and K slices share the grid's z dimension
// (z = batch * slices + slice); alpha and beta apply in the epilogue. Column-major calls arrive turned into
// row-major ones (the host swaps the operands and keeps their transposes). Split-K: slice s covers K range
// [s * k_split, (s + 1) * k_split) and writes its raw partial block to the host's workspace,
// C + z * split_stride with row stride ldc; splitk_reduce.comp sums the slices and applies alpha and beta.
#include "gemm_interface.glsl"

layout(constant_id = 0) const uint BM = 128;
layout(constant_id = 1) const uint BN = 128;
layout(constant_id = 2) const uint BK = 8;
layout(constant_id = 3) const uint TM = 8;
layout(constant_id = 4) const uint TN = 8;
layout(constant_id = 5) const uint LANES_N = 8;    // invocations of a 32-wide group side by side along N
layout(constant_id = 6) const uint THREADS = 256;  // (BM / TM) * (BN / TN): the workgroup size
layout(constant_id = 10) const uint GROUP_M = 8;   // block rows walked together, for L2 reuse (1: row order)
layout(constant_id = 11) const uint A_PAD = 1;     // vec4s of padding per row of the A tile (bank conflicts)
layout(constant_id = 14) const uint B_PAD = 0;     // the same for the B tile
layout(constant_id = 12) const uint TRANS_A = 0;  // 1: op(A) = A^T, A stored K x M
layout(constant_id = 13) const uint TRANS_B = 0;  // 1: op(B) = B^T, B stored N x K
layout(local_size_x_id = 6) in;

layout(std430, set = 0, binding = 0) readonly buffer MatrixA4 { VEC_T A4[]; };
layout(std430, set = 0, binding = 1) readonly buffer MatrixB4 { VEC_T B4[]; };
layout(std430, set = 0, binding = 2) buffer MatrixC4 { VEC_T C4[]; };

const uint THREADS_N = BN / TN;
const uint SEG_M = BM / (TM / 4);  // rows of one of the TM/4 row segments an invocation touches
const uint SEG_N = BN / (TN / 4);
const uint LANES_M = 32 / LANES_N;
const uint WARPS_N = THREADS_N / LANES_N;
const uint A_VECS = BM * BK / 4 / THREADS;  // vec4s of A each invocation fetches per K step
const uint B_VECS = BK * BN / 4 / THREADS;
const uint A_PITCH = BM / 4 + A_PAD;
const uint B_PITCH = BN / 4 + B_PAD;

shared VEC_T tile_a[2][BK][A_PITCH];
shared VEC_T tile_b[2][BK][B_PITCH];

// Two forms of the same algorithm, chosen per element type at build time (shaders/CMakeLists.txt defines
// BLOCKED_VECTOR_HELPERS for f64), because NVIDIA's compiler (driver 580) keeps each type's registers only in
// one of them. The vector-helper form keeps the accumulators (acc: row r's vec4 t at r * ACC_N + t) and the
// staging registers in flat arrays local to main, and its helpers take and return single vectors: in the
// array form the compiler put every f64 accumulator in local memory (a round trip per FMA, 1/15 of the
// speed), while the same vector-helper form costs f32 about a fifth of its speed. Which storage class holds
// the arrays (Function or Private) makes no difference to either; the helpers' shape does. The arrays
// cannot be passed to the helpers instead (inout): array parameters sized by specialization constants give
// SPIR-V that is invalid once specialized. Both forms compute the same sums in the same order.
// The fused epilogue (epilogue.glsl) on elements col .. col + 3 of a row, where `epi` (not a split's raw sums).
VEC_T epilogue4(VEC_T r, uint row, uint col, bool epi) {
  if (epi) {
    [[unroll]] for (uint j = 0; j < 4; ++j) r[j] = ACC_T(gemm_epilogue(EPI_T(r[j]), row, col + j));
  }
  return r;
}

#ifdef BLOCKED_VECTOR_HELPERS
const uint ACC_N = TN / 4;  // accumulator vec4s per row of an invocation's sub-block

// Vec4 number v of a K step's tile, as (stored row, vec4 along it) of the stored operand: `along` vec4s per
// stored row, so consecutive invocations read consecutive vec4s of one row.
uvec2 tile_vec(uint v, uint along) { return uvec2(v / along, (v % along) * 4); }

// Global memory -> registers: vec4 i of this invocation's share of A's K tile starting at k0 of the range
// that ends at k_end.
VEC_T fetch_a(uint i, uint a_base, uint m0, uint k0, uint k_end) {
  const uint lid = gl_LocalInvocationIndex;
  const bool fast = (p.flags & GEMM_VEC_A) != 0 && m0 + BM <= p.M && k0 + BK <= k_end;
  VEC_T v;
  if (TRANS_A != 0) {  // stored K x M: a vec4 holds rows row .. row + 3 of op(A) at one k
    const uvec2 at = tile_vec(lid + i * THREADS, BM / 4);
    const uint k = k0 + at.x, row = m0 + at.y;
    const uint base = a_base + k * p.lda + row;
    if (fast) return A4[base / 4];
    [[unroll]] for (uint j = 0; j < 4; ++j) v[j] = (k < k_end && row + j < p.M) ? A[base + j] : ELEM_T(0);
  } else {  // stored M x K: a vec4 holds k .. k + 3 of one row
    const uvec2 at = tile_vec(lid + i * THREADS, BK / 4);
    const uint row = m0 + at.x, k = k0 + at.y;
    const uint base = a_base + row * p.lda + k;
    if (fast) return A4[base / 4];
    [[unroll]] for (uint j = 0; j < 4; ++j) v[j] = (row < p.M && k + j < k_end) ? A[base + j] : ELEM_T(0);
  }
  return v;
}

// Vec4 i of this invocation's share of B's part of the same K tile.
VEC_T fetch_b(uint i, uint b_base, uint n0, uint k0, uint k_end) {
  const uint lid = gl_LocalInvocationIndex;
  const bool fast = (p.flags & GEMM_VEC_B) != 0 && n0 + BN <= p.N && k0 + BK <= k_end;
  VEC_T v;
  if (TRANS_B != 0) {  // stored N x K: a vec4 holds k .. k + 3 of one column of op(B)
    const uvec2 at = tile_vec(lid + i * THREADS, BK / 4);
    const uint col = n0 + at.x, k = k0 + at.y;
    const uint base = b_base + col * p.ldb + k;
    if (fast) return B4[base / 4];
    [[unroll]] for (uint j = 0; j < 4; ++j) v[j] = (col < p.N && k + j < k_end) ? B[base + j] : ELEM_T(0);
  } else {  // stored K x N: a vec4 holds columns col .. col + 3 at one k
    const uvec2 at = tile_vec(lid + i * THREADS, BN / 4);
    const uint k = k0 + at.x, col = n0 + at.y;
    const uint base = b_base + k * p.ldb + col;
    if (fast) return B4[base / 4];
    [[unroll]] for (uint j = 0; j < 4; ++j) v[j] = (k < k_end && col + j < p.N) ? B[base + j] : ELEM_T(0);
  }
  return v;
}

// Registers -> shared buffer `buf`, as tile_a[k][m] and tile_b[k][n]: vec4 i of this invocation's share. A
// vec4 read along K is scattered over four rows of its tile, one read along M or N goes in whole.
void stage_a(uint buf, uint i, VEC_T v) {
  const uint at_v = gl_LocalInvocationIndex + i * THREADS;
  if (TRANS_A != 0) {
    tile_a[buf][at_v / (BM / 4)][at_v % (BM / 4)] = v;
  } else {
    const uvec2 at = tile_vec(at_v, BK / 4);
    [[unroll]] for (uint j = 0; j < 4; ++j) tile_a[buf][at.y + j][at.x / 4][at.x % 4] = v[j];
  }
}

void stage_b(uint buf, uint i, VEC_T v) {
  const uint at_v = gl_LocalInvocationIndex + i * THREADS;
  if (TRANS_B != 0) {
    const uvec2 at = tile_vec(at_v, BK / 4);
    [[unroll]] for (uint j = 0; j < 4; ++j) tile_b[buf][at.y + j][at.x / 4][at.x % 4] = v[j];
  } else {
    tile_b[buf][at_v / (BN / 4)][at_v % (BN / 4)] = v;
  }
}

// Epilogue for one accumulator vec4 (row, col .. col + 3 of C; nothing outside the matrix). Split: the raw
// partial sums to the workspace (alpha 1, C not read, no fused epilogue: the reduce pass applies it).
// Otherwise C = epilogue(alpha * acc + beta * C) (C read only when read_c), by vec4 where C allows it.
void store_vec(uint row, uint col, VEC_T v, uint c_base, bool read_c, ACC_T alpha, bool epi) {
  if (row >= p.M) return;
  const uint index = c_base + row * p.ldc + col;
  if ((p.flags & GEMM_VEC_C) != 0 && col + 4 <= p.N) {
    VEC_T r = VEC_T(alpha) * v;
    if (read_c) r += VEC_T(p.beta) * C4[index / 4];
    C4[index / 4] = epilogue4(r, row, col, epi);
  } else {
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      if (col + j < p.N) {
        ACC_T r = alpha * v[j];
        if (read_c) r += p.beta * ACC_T(C[index + j]);
        if (epi) r = ACC_T(gemm_epilogue(EPI_T(r), row, col + j));
        C[index + j] = C_T(r);
      }
    }
  }
}

void main() {
  // Warp tiling: each group of 32 invocations covers a LANES_M x LANES_N patch of the invocation grid.
  const uint lid = gl_LocalInvocationIndex;
  const uint warp = lid / 32, lane = lid % 32;
  const uint ty = (warp / WARPS_N) * LANES_M + lane / LANES_N;
  const uint tx = (warp % WARPS_N) * LANES_N + lane % LANES_N;
  const uvec2 block = grouped_workgroup(GROUP_M);
  const uint m0 = block.y * BM, n0 = block.x * BN;
  const uint slices = p.K == 0 ? 1 : (p.K + p.k_split - 1) / p.k_split;
  const uint batch = gl_WorkGroupID.z / slices, slice = gl_WorkGroupID.z % slices;
  const uint k_begin = slice * p.k_split;
  const uint k_end = min(p.K, k_begin + p.k_split);
  const uint a_base = p.a_offset + batch * p.stride_a, b_base = p.b_offset + batch * p.stride_b;

  VEC_T staged_a[A_VECS];
  VEC_T staged_b[B_VECS];
  VEC_T acc[TM * ACC_N];
  [[unroll]] for (uint i = 0; i < TM * ACC_N; ++i) acc[i] = VEC_T(0);
  const uint steps = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
  if (steps > 0) {
    [[unroll]] for (uint i = 0; i < A_VECS; ++i) staged_a[i] = fetch_a(i, a_base, m0, k_begin, k_end);
    [[unroll]] for (uint i = 0; i < B_VECS; ++i) staged_b[i] = fetch_b(i, b_base, n0, k_begin, k_end);
    [[unroll]] for (uint i = 0; i < A_VECS; ++i) stage_a(0, i, staged_a[i]);
    [[unroll]] for (uint i = 0; i < B_VECS; ++i) stage_b(0, i, staged_b[i]);
  }
  barrier();
  for (uint step = 0; step < steps; ++step) {
    const uint buf = step & 1;
    const bool more = step + 1 < steps;
    if (more) {  // the next tile into registers, while this one is multiplied
      const uint k0 = k_begin + (step + 1) * BK;
      [[unroll]] for (uint i = 0; i < A_VECS; ++i) staged_a[i] = fetch_a(i, a_base, m0, k0, k_end);
      [[unroll]] for (uint i = 0; i < B_VECS; ++i) staged_b[i] = fetch_b(i, b_base, n0, k0, k_end);
    }
    [[unroll]] for (uint k = 0; k < BK; ++k) {
      VEC_T a[TM / 4];
      VEC_T b[TN / 4];
      [[unroll]] for (uint s = 0; s < TM / 4; ++s) a[s] = tile_a[buf][k][s * (SEG_M / 4) + ty];
      [[unroll]] for (uint t = 0; t < TN / 4; ++t) b[t] = tile_b[buf][k][t * (SEG_N / 4) + tx];
      [[unroll]] for (uint s = 0; s < TM / 4; ++s) {
        [[unroll]] for (uint i = 0; i < 4; ++i) {
          [[unroll]] for (uint t = 0; t < ACC_N; ++t) {
            const uint r = (s * 4 + i) * ACC_N + t;
            acc[r] = fma(VEC_T(a[s][i]), b[t], acc[r]);
          }
        }
      }
    }
    if (more) {
      [[unroll]] for (uint i = 0; i < A_VECS; ++i) stage_a(buf ^ 1, i, staged_a[i]);
      [[unroll]] for (uint i = 0; i < B_VECS; ++i) stage_b(buf ^ 1, i, staged_b[i]);
    }
    barrier();
  }

  const bool partial = slices > 1;
  const uint c_base = partial ? gl_WorkGroupID.z * p.split_stride : p.c_offset + batch * p.stride_c;
  const bool read_c = !partial && (p.flags & GEMM_BETA_ZERO) == 0;
  const ACC_T alpha = partial ? ACC_T(1) : p.alpha;
  const bool epi = !partial && epilogue_on();
  [[unroll]] for (uint s = 0; s < TM / 4; ++s) {
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      [[unroll]] for (uint t = 0; t < ACC_N; ++t) {
        const uint r = (s * 4 + i) * ACC_N + t;
        store_vec(m0 + s * SEG_M + ty * 4 + i, n0 + t * SEG_N + tx * 4, acc[r], c_base, read_c, alpha, epi);
      }
    }
  }
}
#else  // the array form: f32
VEC_T staged_a[A_VECS];
VEC_T staged_b[B_VECS];
VEC_T acc[TM][TN / 4];

// Vec4 number v of a K step's tile, as (stored row, vec4 along it) of the stored operand: `along` vec4s per
// stored row, so consecutive invocations read consecutive vec4s of one row.
uvec2 tile_vec(uint v, uint along) { return uvec2(v / along, (v % along) * 4); }

// Global memory -> registers: A's part of the K tile starting at k0 of the range that ends at k_end.
void fetch_a(uint a_base, uint m0, uint k0, uint k_end) {
  const uint lid = gl_LocalInvocationIndex;
  const bool fast = (p.flags & GEMM_VEC_A) != 0 && m0 + BM <= p.M && k0 + BK <= k_end;
  [[unroll]] for (uint i = 0; i < A_VECS; ++i) {
    if (TRANS_A != 0) {  // stored K x M: a vec4 holds rows row .. row + 3 of op(A) at one k
      const uvec2 at = tile_vec(lid + i * THREADS, BM / 4);
      const uint k = k0 + at.x, row = m0 + at.y;
      const uint base = a_base + k * p.lda + row;
      if (fast) {
        staged_a[i] = A4[base / 4];
      } else {
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          staged_a[i][j] = (k < k_end && row + j < p.M) ? A[base + j] : ELEM_T(0);
        }
      }
    } else {  // stored M x K: a vec4 holds k .. k + 3 of one row
      const uvec2 at = tile_vec(lid + i * THREADS, BK / 4);
      const uint row = m0 + at.x, k = k0 + at.y;
      const uint base = a_base + row * p.lda + k;
      if (fast) {
        staged_a[i] = A4[base / 4];
      } else {
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          staged_a[i][j] = (row < p.M && k + j < k_end) ? A[base + j] : ELEM_T(0);
        }
      }
    }
  }
}

// B's part of the same K tile.
void fetch_b(uint b_base, uint n0, uint k0, uint k_end) {
  const uint lid = gl_LocalInvocationIndex;
  const bool fast = (p.flags & GEMM_VEC_B) != 0 && n0 + BN <= p.N && k0 + BK <= k_end;
  [[unroll]] for (uint i = 0; i < B_VECS; ++i) {
    if (TRANS_B != 0) {  // stored N x K: a vec4 holds k .. k + 3 of one column of op(B)
      const uvec2 at = tile_vec(lid + i * THREADS, BK / 4);
      const uint col = n0 + at.x, k = k0 + at.y;
      const uint base = b_base + col * p.ldb + k;
      if (fast) {
        staged_b[i] = B4[base / 4];
      } else {
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          staged_b[i][j] = (col < p.N && k + j < k_end) ? B[base + j] : ELEM_T(0);
        }
      }
    } else {  // stored K x N: a vec4 holds columns col .. col + 3 at one k
      const uvec2 at = tile_vec(lid + i * THREADS, BN / 4);
      const uint k = k0 + at.x, col = n0 + at.y;
      const uint base = b_base + k * p.ldb + col;
      if (fast) {
        staged_b[i] = B4[base / 4];
      } else {
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          staged_b[i][j] = (k < k_end && col + j < p.N) ? B[base + j] : ELEM_T(0);
        }
      }
    }
  }
}

void fetch(uint a_base, uint b_base, uint m0, uint n0, uint k0, uint k_end) {
  fetch_a(a_base, m0, k0, k_end);
  fetch_b(b_base, n0, k0, k_end);
}

// Registers -> shared buffer `buf`, as tile_a[k][m] and tile_b[k][n]: a vec4 read along K is scattered over
// four rows of its tile, one read along M or N goes in whole.
void stage(uint buf) {
  const uint lid = gl_LocalInvocationIndex;
  [[unroll]] for (uint i = 0; i < A_VECS; ++i) {
    const uint v = lid + i * THREADS;
    if (TRANS_A != 0) {
      tile_a[buf][v / (BM / 4)][v % (BM / 4)] = staged_a[i];
    } else {
      const uvec2 at = tile_vec(v, BK / 4);
      [[unroll]] for (uint j = 0; j < 4; ++j) tile_a[buf][at.y + j][at.x / 4][at.x % 4] = staged_a[i][j];
    }
  }
  [[unroll]] for (uint i = 0; i < B_VECS; ++i) {
    const uint v = lid + i * THREADS;
    if (TRANS_B != 0) {
      const uvec2 at = tile_vec(v, BK / 4);
      [[unroll]] for (uint j = 0; j < 4; ++j) tile_b[buf][at.y + j][at.x / 4][at.x % 4] = staged_b[i][j];
    } else {
      tile_b[buf][v / (BN / 4)][v % (BN / 4)] = staged_b[i];
    }
  }
}

void multiply(uint buf, uint ty, uint tx) {
  [[unroll]] for (uint k = 0; k < BK; ++k) {
    VEC_T a[TM / 4];
    VEC_T b[TN / 4];
    [[unroll]] for (uint s = 0; s < TM / 4; ++s) a[s] = tile_a[buf][k][s * (SEG_M / 4) + ty];
    [[unroll]] for (uint s = 0; s < TN / 4; ++s) b[s] = tile_b[buf][k][s * (SEG_N / 4) + tx];
    [[unroll]] for (uint s = 0; s < TM / 4; ++s) {
      [[unroll]] for (uint i = 0; i < 4; ++i) {
        [[unroll]] for (uint t = 0; t < TN / 4; ++t) {
          acc[s * 4 + i][t] = fma(VEC_T(a[s][i]), b[t], acc[s * 4 + i][t]);
        }
      }
    }
  }
}

void main() {
  // Warp tiling: each group of 32 invocations covers a LANES_M x LANES_N patch of the invocation grid.
  const uint lid = gl_LocalInvocationIndex;
  const uint warp = lid / 32, lane = lid % 32;
  const uint ty = (warp / WARPS_N) * LANES_M + lane / LANES_N;
  const uint tx = (warp % WARPS_N) * LANES_N + lane % LANES_N;
  const uvec2 block = grouped_workgroup(GROUP_M);
  const uint bx = block.x, by = block.y;
  const uint m0 = by * BM;
  const uint n0 = bx * BN;
  const uint slices = p.K == 0 ? 1 : (p.K + p.k_split - 1) / p.k_split;
  const uint batch = gl_WorkGroupID.z / slices, slice = gl_WorkGroupID.z % slices;
  const uint k_begin = slice * p.k_split;
  const uint k_end = min(p.K, k_begin + p.k_split);
  const uint a_base = p.a_offset + batch * p.stride_a, b_base = p.b_offset + batch * p.stride_b;

  [[unroll]] for (uint i = 0; i < TM; ++i) {
    [[unroll]] for (uint t = 0; t < TN / 4; ++t) acc[i][t] = VEC_T(0);
  }
  const uint steps = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
  if (steps > 0) {
    fetch(a_base, b_base, m0, n0, k_begin, k_end);
    stage(0);
  }
  barrier();
  for (uint s = 0; s < steps; ++s) {
    const uint buf = s & 1;
    if (s + 1 < steps) fetch(a_base, b_base, m0, n0, k_begin + (s + 1) * BK, k_end);
    multiply(buf, ty, tx);
    if (s + 1 < steps) stage(buf ^ 1);
    barrier();
  }

  // Epilogue. Split: the raw partial sums to the workspace. Otherwise C = epilogue(alpha * acc + beta * C)
  // (C read only when beta != 0; the fused epilogue only where the host set one), by vec4 where C allows it.
  const bool partial = slices > 1;
  const uint c_base = partial ? gl_WorkGroupID.z * p.split_stride : p.c_offset + batch * p.stride_c;
  const bool read_c = !partial && (p.flags & GEMM_BETA_ZERO) == 0;
  const ACC_T alpha = partial ? ACC_T(1) : p.alpha;
  const bool epi = !partial && epilogue_on();
  [[unroll]] for (uint s = 0; s < TM / 4; ++s) {
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      const uint row = m0 + s * SEG_M + ty * 4 + i;
      if (row >= p.M) continue;
      [[unroll]] for (uint t = 0; t < TN / 4; ++t) {
        const uint col = n0 + t * SEG_N + tx * 4;
        const uint index = c_base + row * p.ldc + col;
        if ((p.flags & GEMM_VEC_C) != 0 && col + 4 <= p.N) {
          VEC_T r = VEC_T(alpha) * acc[s * 4 + i][t];
          if (read_c) r += VEC_T(p.beta) * C4[index / 4];
          C4[index / 4] = epilogue4(r, row, col, epi);
        } else {
          [[unroll]] for (uint j = 0; j < 4; ++j) {
            if (col + j < p.N) {
              ACC_T r = alpha * acc[s * 4 + i][t][j];
              if (read_c) r += p.beta * ACC_T(C[index + j]);
              if (epi) r = ACC_T(gemm_epilogue(EPI_T(r), row, col + j));
              C[index + j] = C_T(r);
            }
          }
        }
      }
    }
  }
}
#endif
