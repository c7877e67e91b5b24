#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_shader_subgroup_basic : enable
// Thin products on subgroup-scope cooperative matrices (VK_KHR_cooperative_matrix): a long op(A) against a
// small op(B) (K and a block of N of a few fragments each), f16 or bf16 inputs, fp32 sums. A network layer over
// every pixel of a frame is one: 2 million rows against 64 x 64 weights. Such a product is bound by reading A
// and writing C once; a tiled kernel pays a tile's prologue (B's tile loaded), one short K loop and its store
// for every block of rows, which leaves the memory idle between them.
//
// So each workgroup loads its block of B (KF x NF fragments, K padded with zeros to whole fragments) once,
// keeps every fragment of it in registers, and then streams blocks of op(A)'s rows past it: each of its
// subgroups takes one strip of TM rows a block, loads the strip's KF fragments of A, multiplies them into NF
// accumulators and stores them, alpha and the fused epilogue applied in registers. The workgroups walk the
// blocks of rows grid-stride, so a few per compute unit cover any M, each loading B once.
//
// A's fragments load straight from the buffer where the host saw op(A) = A with rows, offset and batch stride
// in 16 bytes and K whole fragments (DIRECT_A; the matrix loads need 16-byte aligned rows), and the strip lies
// inside M; else the strip goes through the subgroup's area of shared memory, element by element, zeros
// outside op(A). C likewise: straight from the accumulators where beta is 0, C's rows and offset are in 16
// bytes and the fragment lies inside C; else through shared memory and the interface's store_c, element by
// element, nothing written outside C (a bf16 C always: devices offer no bf16 accumulator to store from).
// Every choice between the two ways is the same for the whole workgroup (a block's rows inside M or not), so
// the workgroup barriers of the shared-memory way are met by every invocation.
#include "gemm_interface.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;  // the workgroup size (also local_size_x)
layout(constant_id = 1) const uint TM = 16;   // the fragment shape, one the device lists
layout(constant_id = 2) const uint TN = 16;
layout(constant_id = 3) const uint TK = 16;
layout(constant_id = 4) const uint SG = 32;   // the subgroup size the pipeline requires
layout(constant_id = 5) const uint KF = 4;    // fragments along K (K rounded up to TK)
layout(constant_id = 6) const uint NF = 4;    // fragments along N in a workgroup's block of columns
layout(constant_id = 7) const uint DIRECT_A = 0;  // op(A) = A, rows, offset and batch stride in 16 bytes, K % TK == 0
layout(constant_id = 8) const uint PREFETCH = 1;  // the next block's strip loaded before this block's multiplies

const uint SUBGROUPS = WG / SG;
const uint UNIT = GEMM_COOPMAT_UNIT;  // 8 elements of 16 bits: one uvec4 of shared memory
const uint KP = KF * TK, NP = NF * TN;
const uint SB = NP / UNIT + 1;  // row strides in units, one unit longer than the data (banks)
const uint SA = KP / UNIT + 1;
const uint STRIP = TM * SA;  // one subgroup's staged strip of A, in units

shared uvec4 sh_b[KP * SB];
shared uvec4 sh_a[SUBGROUPS * STRIP];
shared ACC_T sh_c[SUBGROUPS * TM * TN];  // one fragment of C per subgroup, on its way out

#define MAT_A coopmat<A_T, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA>
#define MAT_B coopmat<B_T, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB>
#define MAT_ACC coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>
#define MAT_C coopmat<C_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>

MAT_ACC element_at;  // component e: the number (row * TN + column) of the fragment element it holds

// An element's 16 bits, as load_a and load_b give it (bf16 widened exactly to fp32).
#ifdef VKGEMM_BF16_MMA
uint bits16(float x) { return floatBitsToUint(x) >> 16; }
#else
uint bits16(float16_t x) { return packFloat2x16(f16vec2(x, float16_t(0))); }
#endif

// Eight elements as one unit, the first in the low bits.
uvec4 unit_of(uint v[8]) {
  return uvec4(v[0] | (v[1] << 16), v[2] | (v[3] << 16), v[4] | (v[5] << 16), v[6] | (v[7] << 16));
}

// This workgroup's block of op(B) (columns col0 ..) into shared memory, zeros past K and N.
void stage_b(uint batch, uint col0) {
  for (uint u = gl_LocalInvocationIndex; u < KP * (NP / UNIT); u += WG) {
    const uint k = u / (NP / UNIT), n = col0 + (u % (NP / UNIT)) * UNIT;
    uint v[8];
    [[unroll]] for (uint e = 0; e < UNIT; ++e) v[e] = k < p.K && n + e < p.N ? bits16(load_b(batch, k, n + e)) : 0u;
    sh_b[k * SB + u % (NP / UNIT)] = unit_of(v);
  }
}

// Rows r0 .. r0+TM-1 of op(A) into this subgroup's area, zeros past M and K.
void stage_a(uint batch, uint r0, uint sg) {
  for (uint u = gl_SubgroupInvocationID; u < TM * (KP / UNIT); u += SG) {
    const uint r = r0 + u / (KP / UNIT), k = (u % (KP / UNIT)) * UNIT;
    uint v[8];
    [[unroll]] for (uint e = 0; e < UNIT; ++e) v[e] = r < p.M && k + e < p.K ? bits16(load_a(batch, r, k + e)) : 0u;
    sh_a[sg * STRIP + (u / (KP / UNIT)) * SA + u % (KP / UNIT)] = unit_of(v);
  }
}

// element_at for this subgroup: every element's number written into its staging area and loaded as an
// accumulator fragment (coopmat.comp's number_elements: a fragment's components map to its elements alike
// in every matrix of one type, so a fused epilogue learns each element's row and column from it).
void number_elements(uint sg) {
  const uint base = sg * TM * TN;
  for (uint e = gl_SubgroupInvocationID; e < TM * TN; e += SG) sh_c[base + e] = ACC_T(e);
  barrier();
  coopMatLoad(element_at, sh_c, base, TN, gl_CooperativeMatrixLayoutRowMajor);
  barrier();
}

// The fragment at (r, c) of C: C = epilogue(alpha * frag + beta * C). `direct`: straight from registers;
// else through this subgroup's staging area (the workgroup's barriers: every subgroup calls it alike).
void store_fragment(MAT_ACC frag, uint batch, uint r, uint c, uint c_base, bool direct, uint sg) {
#ifndef VKGEMM_BF16_C
  if (direct) {
    if (p.alpha != SCALAR_T(1)) frag = frag * ACC_T(p.alpha);
    if (epilogue_on()) {
      for (int e = 0; e < frag.length(); ++e) {
        const uint at = uint(element_at[e]);
        frag[e] = ACC_T(gemm_epilogue(EPI_T(frag[e]), r + at / TN, c + at % TN));
      }
    }
    coopMatStore(MAT_C(frag), C, c_base + r * p.ldc + c, p.ldc, gl_CooperativeMatrixLayoutRowMajor);
    return;
  }
#endif
  const uint base = sg * TM * TN;
  coopMatStore(frag, sh_c, base, TN, gl_CooperativeMatrixLayoutRowMajor);
  barrier();
  for (uint e = gl_SubgroupInvocationID; e < TM * TN; e += SG) {
    const uint rr = r + e / TN, cc = c + e % TN;
    if (rr < p.M && cc < p.N) store_c(batch, rr, cc, sh_c[base + e]);
  }
  barrier();  // the next fragment overwrites the staging area
}

// The blocks whose strips load straight (the same for every subgroup of the workgroup).
bool direct_block(uint block, uint rows_per_block) { return DIRECT_A != 0 && (block + 1) * rows_per_block <= p.M; }

void load_direct(inout MAT_A fa[KF], uint a_base, uint r0) {
  [[unroll]] for (uint kf = 0; kf < KF; ++kf) {
    coopMatLoad(fa[kf], A, a_base + r0 * p.lda + kf * TK, p.lda, gl_CooperativeMatrixLayoutRowMajor);
  }
}

void load_staged(inout MAT_A fa[KF], uint batch, uint r0, uint sg) {
  stage_a(batch, r0, sg);
  barrier();
  [[unroll]] for (uint kf = 0; kf < KF; ++kf) {
    coopMatLoad(fa[kf], sh_a, sg * STRIP + kf * (TK / UNIT), SA, gl_CooperativeMatrixLayoutRowMajor);
  }
  barrier();  // the next block's strip overwrites the area
}

void main() {
  const uint sg = gl_SubgroupID;
  const uint batch = gemm_batch();
  const uint col0 = gl_WorkGroupID.y * NP;
  const uint a_base = p.a_offset + batch * p.stride_a;
  const uint c_base = p.c_offset + batch * p.stride_c;

  stage_b(batch, col0);
  barrier();
  MAT_B fb[KF * NF];
  [[unroll]] for (uint kf = 0; kf < KF; ++kf) {
    [[unroll]] for (uint nf = 0; nf < NF; ++nf) {
      coopMatLoad(fb[kf * NF + nf], sh_b, kf * TK * SB + nf * (TN / UNIT), SB, gl_CooperativeMatrixLayoutRowMajor);
    }
  }
  // Straight stores: beta 0 and C's rows and offset in 16 bytes (8 elements); then per fragment, inside C.
  const bool c_aligned = (p.flags & GEMM_BETA_ZERO) != 0u && c_base % 8 == 0 && p.ldc % 8 == 0;
  if (c_aligned && epilogue_on()) number_elements(sg);

  // The blocks grid-stride. A block that loads straight has its strip loaded before the previous block's
  // multiplies and stores (PREFETCH) or after them; a staged one when its turn comes.
  const uint rows_per_block = SUBGROUPS * TM;
  const uint blocks = (p.M + rows_per_block - 1) / rows_per_block;
  const uint stride = gl_NumWorkGroups.x;
  MAT_A fa[KF];
  MAT_A next_fa[KF];
  uint block = gl_WorkGroupID.x;
  if (block < blocks && direct_block(block, rows_per_block)) load_direct(fa, a_base, block * rows_per_block + sg * TM);
  for (; block < blocks; block += stride) {
    const uint r0 = block * rows_per_block + sg * TM, next = block + stride;
    const bool next_direct = next < blocks && direct_block(next, rows_per_block);
    if (!direct_block(block, rows_per_block)) load_staged(fa, batch, r0, sg);
    if (PREFETCH != 0 && next_direct) load_direct(next_fa, a_base, r0 + stride * rows_per_block);
    const bool inside = (block + 1) * rows_per_block <= p.M;  // the same for every subgroup
    [[unroll]] for (uint nf = 0; nf < NF; ++nf) {
      MAT_ACC acc = MAT_ACC(ACC_T(0));
      [[unroll]] for (uint kf = 0; kf < KF; ++kf) acc = coopMatMulAdd(fa[kf], fb[kf * NF + nf], acc);
      const uint c = col0 + nf * TN;
      store_fragment(acc, batch, r0, c, c_base, c_aligned && inside && c + TN <= p.N, sg);
    }
    if (PREFETCH != 0) {
      [[unroll]] for (uint kf = 0; kf < KF; ++kf) fa[kf] = next_fa[kf];
    } else if (next_direct) {
      load_direct(fa, a_base, r0 + stride * rows_per_block);
    }
  }
}
