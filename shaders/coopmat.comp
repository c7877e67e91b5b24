#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_shader_subgroup_basic : enable
// f16, bf16 and int8 GEMM on subgroup-scope cooperative matrices (VK_KHR_cooperative_matrix): tensor cores on
// NVIDIA, WMMA on AMD, XMX on Intel, Mesa's emulation on lavapipe. Built with VKGEMM_F16 (ACC_T float, or
// float16_t for fp16 sums), VKGEMM_BF16_MMA (A_T bfloat16_t, ACC_T float, C_T float or bfloat16_t, staged) or
// VKGEMM_INT8_MMA (A_T int8_t or uint8_t; ACC_T and C_T int, or uint for u8, whose sums wrap modulo 2^32 as
// i32's do). The whole BLAS call: op(A) and op(B) transposed or not (TRANS_A, TRANS_B, known
// when the pipeline is built), any leading dimensions and offsets, a batch, alpha and beta.
//
// Nothing here is fixed to one vendor: the fragment shape TM x TN x TK is one the device lists, SG the
// subgroup size the pipeline requires (8 on lavapipe, 32 on NVIDIA, 64 on AMD wave64), and the host derives
// the tiles from them (engine/src/kernels/coopmat_config.cpp). A workgroup of WG invocations (WG / SG
// subgroups) computes a BM x BN tile of C; each subgroup owns a WM x WN part of it as (WM/TM) x (WN/TN)
// accumulator fragments. Per step along K, the tiles of A and B are staged in shared memory in their stored
// order (a transposed operand is copied as it lies and its fragments are loaded column-major), as the raw bits
// loaded, in 8-element units (UNIT_T: a uvec4 of 8 f16 or bf16, a uvec2 of 8 int8) from which the fragments
// load, rows 16 bytes longer than the data so that consecutive rows fall in different banks. With BUFFERS = 2 the staging is
// double-buffered: step s+1's tiles go into one buffer while step s's fragments are read from the other, one
// barrier per step; and step s+1's global loads are issued before step s's multiplies, into registers.
//
// Loads move 16 bytes (CHUNK elements: 8 f16 or bf16, 16 int8) at a time where the operand's rows and offset are
// 16-byte aligned and the chunk lies inside the matrix, else element by element with zeros outside. The fast path -- a tile wholly
// inside C with both operands aligned -- runs its whole K steps UNROLL at a time without any bounds check;
// every other tile, and the partial last K step, takes the checked loop. C: with beta 0, fragments inside C
// with 8-element aligned rows are stored straight from the accumulator (alpha and a fused epilogue applied to
// the fragment in registers; a bf16 C through a per-subgroup staging area in shared memory, 16 bytes an
// invocation); edge fragments, every fragment when beta is not 0, and a bf16 C's with a fused epilogue go
// through that staging area and the interface's store_c, element by element, nothing written outside C.
#include "gemm_interface.glsl"

// 16-byte views of A and B; the same bindings as the interface's scalar arrays.
layout(std430, set = 0, binding = 0) readonly buffer MatrixA4 { uvec4 A4[]; };
layout(std430, set = 0, binding = 1) readonly buffer MatrixB4 { uvec4 B4[]; };

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;  // the workgroup size (also local_size_x)
layout(constant_id = 1) const uint BM = 128;  // the workgroup's tile of C, and its K step
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint WM = 64;   // one subgroup's part of the tile
layout(constant_id = 5) const uint WN = 32;
layout(constant_id = 6) const uint TM = 16;   // the fragment shape, one the device lists
layout(constant_id = 7) const uint TN = 16;
layout(constant_id = 8) const uint TK = 16;
layout(constant_id = 9) const uint SG = 32;   // the subgroup size the pipeline requires
layout(constant_id = 10) const uint TRANS_A = 0;  // the push constants' GEMM_TRANS_A, known at build
layout(constant_id = 11) const uint TRANS_B = 0;
layout(constant_id = 12) const uint UNROLL = 2;   // K steps per iteration of the fast loop
layout(constant_id = 13) const uint BUFFERS = 2;  // shared-memory buffers per operand: 1 or 2
layout(constant_id = 14) const uint GROUP_M = 1;  // block rows walked together (grouped_workgroup)
// 1: the host saw that every workgroup tile lies inside C, every K step is whole, A and B are 16-byte aligned
// (rows, offsets, batch strides) and C is stored directly (beta 0, 8-element aligned): the pipeline
// holds the fast path alone, without the checked loads and stores that every other product needs.
layout(constant_id = 15) const uint WHOLE = 0;

const uint SUBGROUPS_N = BN / WN;
const uint FM = WM / TM;
const uint FN = WN / TN;
// The tiles in stored order: rows x columns, columns contiguous in memory.
const uint A_ROWS = TRANS_A != 0 ? BK : BM;
const uint A_COLS = TRANS_A != 0 ? BM : BK;
const uint B_ROWS = TRANS_B != 0 ? BN : BK;
const uint B_COLS = TRANS_B != 0 ? BK : BN;
// Global loads move 16-byte chunks (CHUNK elements); shared memory holds 8-element units (UNIT_T), the
// elements' bits as loaded: every fragment side is a multiple of 8 (coopmat_config.cpp's rule), so every
// fragment starts on a unit, and a 16-byte unit where the elements are 2 bytes lets the fragment loads move
// 16 bytes a row.
#ifdef VKGEMM_INT8_MMA
const uint CHUNK = 16;
#define UNIT_T uvec2
#define UNIT_OF(v, u) ((u) == 0 ? (v).xy : (v).zw)
#else
const uint CHUNK = 8;
#define UNIT_T uvec4
#define UNIT_OF(v, u) (v)
#endif
const uint UNIT = GEMM_COOPMAT_UNIT;  // elements per unit
const uint UNITS = CHUNK / UNIT;  // units per chunk
const uint SA = A_COLS / UNIT + UNITS;  // row stride in shared memory, in units: the data plus the 16-byte skew
const uint SB = B_COLS / UNIT + UNITS;
const uint A_TILE = A_ROWS * SA;  // one buffer, in units
const uint B_TILE = B_ROWS * SB;
const uint A_CHUNKS = A_ROWS * A_COLS / CHUNK;  // 16-byte chunks per step
const uint B_CHUNKS = B_ROWS * B_COLS / CHUNK;
const uint A_LOADS = (A_CHUNKS + WG - 1) / WG;  // per invocation
const uint B_LOADS = (B_CHUNKS + WG - 1) / WG;

shared UNIT_T sh_a[BUFFERS * A_TILE];
shared UNIT_T sh_b[BUFFERS * B_TILE];
shared ACC_T sh_c[(WG / SG) * TM * TN];  // one fragment of C per subgroup, on its way out

#define MAT_A coopmat<A_T, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA>
#define MAT_B coopmat<B_T, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB>
#define MAT_ACC coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>
#define MAT_C coopmat<C_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>

uint row0, col0;        // this workgroup's tile of C
uint a_base, b_base;    // this batch entry's A and B, in elements
bool vec_a, vec_b;      // rows and offset 16-byte aligned: 16-byte loads where a chunk lies inside
uvec4 ra[A_LOADS];      // the next step's tiles on their way to shared memory
uvec4 rb[B_LOADS];
MAT_ACC acc[FM * FN];   // this subgroup's part of C
MAT_ACC element_at;     // component e: the number (row * TN + column) of the fragment element it holds

#if defined(VKGEMM_INT8_MMA) || defined(VKGEMM_BF16_MMA)
// Elements as their bits, PER_WORD to a 32-bit word (4 int8, 2 bf16), the first in the low bits.
const uint PER_WORD = CHUNK / 4;
const uint BITS = 32 / PER_WORD;
#ifdef VKGEMM_INT8_MMA
#define RAW(x) (uint(x) & 0xffu)
#else
#define RAW(x) (floatBitsToUint(float(x)) >> 16)  // bf16 is the upper half of an fp32 (bit casts of bfloat16_t need shaderInt16)
#endif

// CHUNK stored elements (r, c .. c+CHUNK-1) of A at index `at`, zeros outside rows x cols, as 16 bytes.
uvec4 chunk_a(uint at, uint r, uint c, uint rows, uint cols) {
  if (vec_a && r < rows && c + CHUNK <= cols) return A4[at / CHUNK];
  uvec4 w = uvec4(0);
  [[unroll]] for (uint e = 0; e < CHUNK; ++e) {
    if (r < rows && c + e < cols) w[e / PER_WORD] |= RAW(A[at + e]) << (BITS * (e % PER_WORD));
  }
  return w;
}

uvec4 chunk_b(uint at, uint r, uint c, uint rows, uint cols) {
  if (vec_b && r < rows && c + CHUNK <= cols) return B4[at / CHUNK];
  uvec4 w = uvec4(0);
  [[unroll]] for (uint e = 0; e < CHUNK; ++e) {
    if (r < rows && c + e < cols) w[e / PER_WORD] |= RAW(B[at + e]) << (BITS * (e % PER_WORD));
  }
  return w;
}
#else
uvec4 pack8(float16_t v[8]) {
  return uvec4(packFloat2x16(f16vec2(v[0], v[1])), packFloat2x16(f16vec2(v[2], v[3])),
               packFloat2x16(f16vec2(v[4], v[5])), packFloat2x16(f16vec2(v[6], v[7])));
}

// Eight stored elements (r, c .. c+7) of A at index `at`, zeros outside rows x cols.
uvec4 chunk_a(uint at, uint r, uint c, uint rows, uint cols) {
  if (vec_a && r < rows && c + CHUNK <= cols) return A4[at / CHUNK];
  float16_t v[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) v[e] = (r < rows && c + e < cols) ? A[at + e] : float16_t(0);
  return pack8(v);
}

uvec4 chunk_b(uint at, uint r, uint c, uint rows, uint cols) {
  if (vec_b && r < rows && c + CHUNK <= cols) return B4[at / CHUNK];
  float16_t v[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) v[e] = (r < rows && c + e < cols) ? B[at + e] : float16_t(0);
  return pack8(v);
}

#endif

// Step k0's tiles into registers. `whole`: the tiles lie inside the matrices and are aligned (the fast path's
// steps), so no check at all; else checked chunks.
void fetch(uint k0, bool whole) {
  // A's stored tile starts at stored (r0, c0) and the stored matrix is rows x cols.
  const uint ar0 = TRANS_A != 0 ? k0 : row0, ac0 = TRANS_A != 0 ? row0 : k0;
  const uint arows = TRANS_A != 0 ? p.K : p.M, acols = TRANS_A != 0 ? p.M : p.K;
  [[unroll]] for (uint i = 0; i < A_LOADS; ++i) {
    const uint c = gl_LocalInvocationIndex + i * WG;
    if (A_CHUNKS % WG == 0 || c < A_CHUNKS) {
      const uint r = ar0 + c / (A_COLS / CHUNK), col = ac0 + (c % (A_COLS / CHUNK)) * CHUNK;
      const uint at = a_base + r * p.lda + col;
      ra[i] = WHOLE != 0 || whole ? A4[at / CHUNK] : chunk_a(at, r, col, arows, acols);
    }
  }
  const uint br0 = TRANS_B != 0 ? col0 : k0, bc0 = TRANS_B != 0 ? k0 : col0;
  const uint brows = TRANS_B != 0 ? p.N : p.K, bcols = TRANS_B != 0 ? p.K : p.N;
  [[unroll]] for (uint i = 0; i < B_LOADS; ++i) {
    const uint c = gl_LocalInvocationIndex + i * WG;
    if (B_CHUNKS % WG == 0 || c < B_CHUNKS) {
      const uint r = br0 + c / (B_COLS / CHUNK), col = bc0 + (c % (B_COLS / CHUNK)) * CHUNK;
      const uint at = b_base + r * p.ldb + col;
      rb[i] = WHOLE != 0 || whole ? B4[at / CHUNK] : chunk_b(at, r, col, brows, bcols);
    }
  }
}

// The registers into shared-memory buffer `buf`.
void stage(uint buf) {
  [[unroll]] for (uint i = 0; i < A_LOADS; ++i) {
    const uint c = gl_LocalInvocationIndex + i * WG;
    if (A_CHUNKS % WG == 0 || c < A_CHUNKS) {
      const uint at = buf * A_TILE + (c / (A_COLS / CHUNK)) * SA + (c % (A_COLS / CHUNK)) * UNITS;
      [[unroll]] for (uint u = 0; u < UNITS; ++u) sh_a[at + u] = UNIT_OF(ra[i], u);
    }
  }
  [[unroll]] for (uint i = 0; i < B_LOADS; ++i) {
    const uint c = gl_LocalInvocationIndex + i * WG;
    if (B_CHUNKS % WG == 0 || c < B_CHUNKS) {
      const uint at = buf * B_TILE + (c / (B_COLS / CHUNK)) * SB + (c % (B_COLS / CHUNK)) * UNITS;
      [[unroll]] for (uint u = 0; u < UNITS; ++u) sh_b[at + u] = UNIT_OF(rb[i], u);
    }
  }
}

// One K step's multiplies from buffer `buf` into acc: this subgroup's FM x FN fragments, TK at a time.
void multiply(uint buf, uint sg_row, uint sg_col) {
  [[unroll]] for (uint kk = 0; kk < BK; kk += TK) {
    MAT_A fa[FM];
    [[unroll]] for (uint i = 0; i < FM; ++i) {
      const uint m = sg_row + i * TM;
      if (TRANS_A != 0) {  // stored k x m: (m, k) at k * SA + m
        coopMatLoad(fa[i], sh_a, buf * A_TILE + kk * SA + m / UNIT, SA, gl_CooperativeMatrixLayoutColumnMajor);
      } else {
        coopMatLoad(fa[i], sh_a, buf * A_TILE + m * SA + kk / UNIT, SA, gl_CooperativeMatrixLayoutRowMajor);
      }
    }
    [[unroll]] for (uint j = 0; j < FN; ++j) {
      const uint n = sg_col + j * TN;
      MAT_B fb;
      if (TRANS_B != 0) {  // stored n x k: (k, n) at n * SB + k
        coopMatLoad(fb, sh_b, buf * B_TILE + n * SB + kk / UNIT, SB, gl_CooperativeMatrixLayoutColumnMajor);
      } else {
        coopMatLoad(fb, sh_b, buf * B_TILE + kk * SB + n / UNIT, SB, gl_CooperativeMatrixLayoutRowMajor);
      }
      [[unroll]] for (uint i = 0; i < FM; ++i) acc[i * FN + j] = coopMatMulAdd(fa[i], fb, acc[i * FN + j]);
    }
  }
}

// After step s's multiplies: step s+1's registers into shared memory, visible to all (`next`: there is one).
// Double-buffered, step s+1 goes into the other buffer and one barrier suffices; single-buffered, everyone
// must be done reading first.
void advance(inout uint buf, bool next) {
  if (BUFFERS == 2) {
    if (next) stage(buf ^ 1u);
    barrier();
    buf ^= 1u;
  } else {
    barrier();
    if (next) stage(0);
    barrier();
  }
}

// Every other product, a K step at a time: the fast path's whole steps UNROLL at a time while each one's next
// step is whole (no checks, one straight run of loads and multiplies for the compiler to schedule), then the
// checked steps.
void stepped_product(uint sg_row, uint sg_col, bool fast) {
  const uint steps = (p.K + BK - 1) / BK, whole_steps = p.K / BK;
  uint buf = 0, s = 0;
  if (steps > 0) {
    fetch(0, fast && whole_steps > 0);
    stage(0);
    barrier();
  }
  if (fast) {
    for (; s + UNROLL < whole_steps; s += UNROLL) {
      [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
        fetch((s + u + 1) * BK, true);
        multiply(buf, sg_row, sg_col);
        advance(buf, true);
      }
    }
  }
  for (; s < steps; ++s) {
    const bool next = s + 1 < steps;
    if (next) fetch((s + 1) * BK, fast && s + 2 <= whole_steps);
    multiply(buf, sg_row, sg_col);
    advance(buf, next);
  }
}

// The straight form of the fast path alone (STRAIGHT: WHOLE, both operands untransposed, 16-bit elements,
// one buffer): NVIDIA's sample's loop as it writes it -- each invocation's load and staging positions worked
// out once, the next step's loads into arrays local to this function, barrier, stage, barrier, load the
// next step, multiply -- which the driver compiles into fewer registers and a faster loop than the general
// helpers above compute the same steps with (docs/design/coopmat.md). Each pass of the workgroup loads whole
// rows of both tiles, so the workgroup must be a multiple of a row's chunks (a 192-wide tile at 256
// invocations is not: it takes the stepped helpers).
const uint A_PER_ROW = BK / CHUNK, B_PER_ROW = BN / CHUNK;  // invocations along a row of each tile
const uint A_STEP = WG / A_PER_ROW, B_STEP = WG / B_PER_ROW;  // rows a pass of the workgroup covers
const bool STRAIGHT = WHOLE != 0 && BUFFERS == 1 && TRANS_A == 0 && TRANS_B == 0 && CHUNK == 8 &&
                      WG % A_PER_ROW == 0 && WG % B_PER_ROW == 0;
void straight_product(uint sg_row, uint sg_col) {
  const uint ai = gl_LocalInvocationIndex / A_PER_ROW, ak = CHUNK * (gl_LocalInvocationIndex % A_PER_ROW);
  const uint bk = gl_LocalInvocationIndex / B_PER_ROW, bj = CHUNK * (gl_LocalInvocationIndex % B_PER_ROW);
  const uint a_at = a_base + (row0 + ai) * p.lda + ak, b_at = b_base + bk * p.ldb + col0 + bj;
  uvec4 ta[A_LOADS];
  uvec4 tb[B_LOADS];
  // A pass covers A_STEP rows of A's tile (B_STEP of B's); where the workgroup outnumbers a tile's chunks
  // (small tiles), the invocations past its last row sit the last pass out.
#define A_ROW_IN(i) (A_CHUNKS % WG == 0 || ai + (i) * A_STEP < BM)
#define B_ROW_IN(i) (B_CHUNKS % WG == 0 || bk + (i) * B_STEP < BK)
  [[unroll]] for (uint i = 0; i < A_LOADS; ++i) {
    if (A_ROW_IN(i)) ta[i] = A4[(a_at + i * A_STEP * p.lda) / CHUNK];
  }
  [[unroll]] for (uint i = 0; i < B_LOADS; ++i) {
    if (B_ROW_IN(i)) tb[i] = B4[(b_at + i * B_STEP * p.ldb) / CHUNK];
  }
  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    const bool last = k0 + BK >= p.K;
    barrier();
    // One unit a chunk (16-bit elements).
    [[unroll]] for (uint i = 0; i < A_LOADS; ++i) {
      if (A_ROW_IN(i)) sh_a[(ai + i * A_STEP) * SA + ak / UNIT] = UNIT_OF(ta[i], 0);
    }
    [[unroll]] for (uint i = 0; i < B_LOADS; ++i) {
      if (B_ROW_IN(i)) sh_b[(bk + i * B_STEP) * SB + bj / UNIT] = UNIT_OF(tb[i], 0);
    }
    barrier();
    [[unroll]] for (uint i = 0; i < A_LOADS; ++i) {
      if (!last && A_ROW_IN(i)) ta[i] = A4[(a_at + k0 + BK + i * A_STEP * p.lda) / CHUNK];
    }
    [[unroll]] for (uint i = 0; i < B_LOADS; ++i) {
      if (!last && B_ROW_IN(i)) tb[i] = B4[(b_at + (k0 + BK + i * B_STEP) * p.ldb) / CHUNK];
    }
    [[unroll]] for (uint kk = 0; kk < BK; kk += TK) {
      MAT_A fa[FM];
      [[unroll]] for (uint i = 0; i < FM; ++i) {
        coopMatLoad(fa[i], sh_a, (sg_row + i * TM) * SA + kk / UNIT, SA, gl_CooperativeMatrixLayoutRowMajor);
      }
      [[unroll]] for (uint j = 0; j < FN; ++j) {
        MAT_B fb;
        coopMatLoad(fb, sh_b, kk * SB + (sg_col + j * TN) / UNIT, SB, gl_CooperativeMatrixLayoutRowMajor);
        [[unroll]] for (uint i = 0; i < FM; ++i) acc[i * FN + j] = coopMatMulAdd(fa[i], fb, acc[i * FN + j]);
      }
    }
  }
}

#ifdef VKGEMM_BF16_C
// A 16-byte view of C, the interface's binding: a bf16 C inside the tile is written 8 elements at a time.
layout(std430, set = 0, binding = 2) buffer MatrixC4 { uvec4 C4[]; };

// Elements e .. e+7 of this subgroup's staged fragment, rounded to bf16 and packed in order.
uvec4 packed_bf16(uint at) {
  uvec4 w;
  [[unroll]] for (uint q = 0; q < 4; ++q) {
    w[q] = bf16_pair(sh_c[at + 2 * q], sh_c[at + 2 * q + 1]);
  }
  return w;
}
#endif

// alpha and the fused epilogue on fragment `frag` at (r, c) in registers, each element's row and column from
// element_at (number_elements): C = epilogue(alpha * frag), the order store_c applies them in. A macro: as a
// function taking the fragment inout it made the f16 direct store slower on NVIDIA (docs/design/epilogue.md).
#ifdef VKGEMM_NO_EPILOGUE
#define ALPHA_AND_EPILOGUE(frag, r, c) \
  if (p.alpha != SCALAR_T(1)) frag = frag * ACC_T(p.alpha);
#else
#define ALPHA_AND_EPILOGUE(frag, r, c)                                                   \
  if (p.alpha != SCALAR_T(1)) frag = frag * ACC_T(p.alpha);                              \
  if (epilogue_on()) {                                                                   \
    for (int e = 0; e < frag.length(); ++e) {                                            \
      const uint at = uint(element_at[e]);                                               \
      frag[e] = ACC_T(gemm_epilogue(EPI_T(frag[e]), (r) + at / TN, (c) + at % TN));       \
    }                                                                                    \
  }
#endif

// The fragment at (r, c) of C: C = alpha * frag + beta * C. `direct` (inside C, 8-element aligned rows, beta
// 0): straight from the accumulator, or for a bf16 C through this subgroup's staging area, 8 elements an
// invocation rounded and stored 16 bytes at a time; else through the staging area element by element, inside
// C only. A bf16 C is always staged (no bf16 accumulator type in the module): devices list bf16 only as A and
// B, so a bf16 accumulator matrix is not a type the device offers (the validation layer says so), and
// NVIDIA's driver 580 converted fp32 fragments to bf16 an ulp off; bf16_bits rounds to nearest even.
void store_fragment(MAT_ACC frag, uint batch, uint r, uint c, uint c_base, bool direct, uint sg) {
#if !defined(VKGEMM_BF16_C) && !defined(VKGEMM_DEQUANT)
  if (direct) {
    ALPHA_AND_EPILOGUE(frag, r, c)
    coopMatStore(MAT_C(frag), C, c_base + r * p.ldc + c, p.ldc, gl_CooperativeMatrixLayoutRowMajor);
    return;
  }
#endif
  const uint base = sg * TM * TN;
#ifdef VKGEMM_BF16_C
  // alpha and a fused epilogue on the fragment in registers, so that packing only rounds (alpha applied as it
  // was packed cost the plain product more: docs/design/epilogue.md).
  if (direct) {
    ALPHA_AND_EPILOGUE(frag, r, c)
  }
#endif
  coopMatStore(frag, sh_c, base, TN, gl_CooperativeMatrixLayoutRowMajor);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
#ifdef VKGEMM_BF16_C
  if (direct) {
    for (uint e = gl_SubgroupInvocationID * 8; e < TM * TN; e += SG * 8) {
      C4[(c_base + (r + e / TN) * p.ldc + c + e % TN) / 8] = packed_bf16(base + e);
    }
  } else
#endif
  {
    for (uint e = gl_SubgroupInvocationID; e < TM * TN; e += SG) {
      const uint rr = r + e / TN, cc = c + e % TN;
      if (rr < p.M && cc < p.N) store_c(batch, rr, cc, sh_c[base + e]);
    }
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();  // the next fragment overwrites the staging area
}

// element_at for this subgroup: every element's number written into its staging area and loaded as an
// accumulator fragment. A fragment's components map to its elements alike in every matrix of one type
// (component-wise arithmetic is defined on them), so component e of element_at names the element that
// component e of an accumulator holds: a fused epilogue learns each element's row and column from it and
// works on the fragment in registers. Every subgroup calls it (its barriers, as the staged store's).
void number_elements(uint sg) {
  const uint base = sg * TM * TN;
  for (uint e = gl_SubgroupInvocationID; e < TM * TN; e += SG) sh_c[base + e] = ACC_T(e);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  coopMatLoad(element_at, sh_c, base, TN, gl_CooperativeMatrixLayoutRowMajor);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

void main() {
  const uvec2 block = grouped_workgroup(GROUP_M);
  row0 = block.y * BM;
  col0 = block.x * BN;
  const uint batch = gemm_batch();
  a_base = p.a_offset + batch * p.stride_a;
  b_base = p.b_offset + batch * p.stride_b;
  const uint c_base = p.c_offset + batch * p.stride_c;
  const uint sg = gl_SubgroupID;
  const uint sg_row = (sg / SUBGROUPS_N) * WM;  // this subgroup's part, inside the tile
  const uint sg_col = (sg % SUBGROUPS_N) * WN;
  vec_a = a_base % CHUNK == 0 && p.lda % CHUNK == 0;
  vec_b = b_base % CHUNK == 0 && p.ldb % CHUNK == 0;
  const bool fast = WHOLE != 0 || (vec_a && vec_b && row0 + BM <= p.M && col0 + BN <= p.N);

  [[unroll]] for (uint i = 0; i < FM * FN; ++i) acc[i] = MAT_ACC(ACC_T(0));

  if (STRAIGHT) {
    straight_product(sg_row, sg_col);
  } else {
    stepped_product(sg_row, sg_col, fast);
  }

  // Direct stores when the whole workgroup tile lies inside C, else every fragment of every subgroup through
  // the staging area: the choice is the same for the whole workgroup, because the staging path's subgroup
  // barriers act as workgroup barriers on lavapipe (26.1): subgroups that skipped them, or stored directly
  // beside staging ones, made the others' results wrong (tests/test_coopmat.cpp's grid caught it).
  // beta != 0 stages too: reading C's fragment with coopMatLoad and adding beta * C to the accumulator gave
  // wrong results on the H200 (driver 580.159.04; the fast-path grid, C f32, every op) while the staged
  // path's element-wise store_c was right; C is read once per element either way.
  // A fused epilogue (epilogue.glsl) needs each element's row and column, which a KHR fragment does not
  // tell: stored straight, the fragments learn them from element_at; staged, store_c applies it.
#ifdef VKGEMM_DEQUANT
  // A dequantized C (an int8 product into float C) needs each element's column for its scale, and fp32
  // arithmetic on the integer sums: staged, through store_c, as an epilogue is.
  const bool direct = false;
#else
  const bool direct = WHOLE != 0 || ((p.flags & GEMM_BETA_ZERO) != 0u && c_base % 8 == 0 && p.ldc % 8 == 0 &&
                                     row0 + BM <= p.M && col0 + BN <= p.N);
  if (direct && epilogue_on()) number_elements(sg);
#endif
  [[unroll]] for (uint i = 0; i < FM; ++i) {
    [[unroll]] for (uint j = 0; j < FN; ++j) {
      const uint r = row0 + sg_row + i * TM, c = col0 + sg_col + j * TN;
      store_fragment(acc[i * FN + j], batch, r, c, c_base, direct, sg);
    }
  }
}
