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
// subgroups takes one strip of TM rows a block, stages it through its own area of shared memory into KF
// fragments, multiplies them into NF accumulators and stores them. The workgroups walk the blocks of rows
// grid-stride, so a few per compute unit cover any M, each loading B once.
//
// A strip moves 16 bytes an invocation a load, fetched into registers a block ahead (PREFETCH), where the
// host saw op(A) = A with rows, offset and batch stride in 16 bytes and K whole fragments (DIRECT_A), and the
// block lies inside M; else element by element, zeros outside op(A). C likewise: the strip's fragments, alpha
// and the fused epilogue applied in registers, go through the subgroup's area in C's type and out 16 bytes
// an invocation a store, where beta is 0, C's rows and offset are in 16 bytes and the block lies inside C
// (its padding columns past N, where N is whole 16-byte units, left unstored; a bf16 C, which no device offers
// as an accumulator to store from, a fragment at a time through an fp32 area, rounded 8 elements an
// invocation); else element by element through store_c, nothing written outside C. The matrices' own loads
// and stores straight from and to the buffers ran at half this rate on NVIDIA (docs/design/thin.md).
// Every choice between the two ways is the same for the whole workgroup (a block's rows inside M or not), so
// the workgroup barriers of the element-by-element way are met by every invocation.
#include "gemm_interface.glsl"

// 16-byte views of A and C; the same bindings as the interface's scalar arrays.
layout(std430, set = 0, binding = 0) readonly buffer MatrixA4 { uvec4 A4[]; };
layout(std430, set = 0, binding = 2) buffer MatrixC4 { uvec4 C4[]; };

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;  // the workgroup size (also local_size_x)
layout(constant_id = 1) const uint TM = 16;   // the fragment shape, one the device lists
layout(constant_id = 2) const uint TN = 16;
layout(constant_id = 3) const uint TK = 16;
layout(constant_id = 4) const uint SG = 32;   // the subgroup size the pipeline requires
layout(constant_id = 5) const uint KF = 4;    // fragments along K (K rounded up to TK)
layout(constant_id = 6) const uint NF = 4;    // fragments along N in a workgroup's block of columns
layout(constant_id = 7) const uint DIRECT_A = 0;  // op(A) = A, rows, offset and batch stride in 16 bytes, K % TK == 0
layout(constant_id = 8) const uint PREFETCH = 1;  // the next block's strip fetched before this block's multiplies
layout(constant_id = 9) const uint C_BYTES = 2;   // C's element size: 2 (f16, bf16) or 4 (f32)
layout(constant_id = 10) const uint RF = 1;       // fragments of rows in a subgroup's strip
layout(constant_id = 11) const uint HOLD_B = 1;   // B's fragments held in registers (else loaded at each use)

const uint SUBGROUPS = WG / SG;
const uint UNIT = GEMM_COOPMAT_UNIT;  // 8 elements of 16 bits: one uvec4 of shared memory
const uint KP = KF * TK, NP = NF * TN;
const uint SB = NP / UNIT + 1;  // row strides in units, one unit longer than the data (banks)
const uint SA = KP / UNIT + 1;
const uint SR = RF * TM;  // a strip's rows
const uint A_STRIP = SR * SA;  // one subgroup's staged strip of A, in units

const uint A_CHUNKS = SR * (KP / UNIT);  // a strip's 16-byte units, and an invocation's loads of them
const uint A_LOADS = (A_CHUNKS + SG - 1) / SG;
// C's strip in C's type, 16 bytes a unit (C_UNIT elements), rows one unit longer than the data. A bf16 C has
// no matrix type to store from: its fragments go out one at a time through the fp32 fragment area (sh_c), so
// its strip area is unused.
const uint C_UNIT = 16 / C_BYTES;
const uint SC = NP / C_UNIT + 1;
#ifdef VKGEMM_BF16_C
const uint C_STRIP = 1;
#else
const uint C_STRIP = SR * SC;
#endif
const uint C_CHUNKS = SR * (NP / C_UNIT);  // a strip's 16-byte units of C, and an invocation's stores of them
const uint C_STORES = (C_CHUNKS + SG - 1) / SG;

shared uvec4 sh_b[KP * SB];
// Each subgroup's area holds its strip of A, then (once its fragments are loaded) its strip of C.
const uint STRIP = A_STRIP > C_STRIP ? A_STRIP : C_STRIP;
shared uvec4 sh_strip[SUBGROUPS * STRIP];
shared ACC_T sh_c[SUBGROUPS * TM * TN];  // one fragment of C per subgroup, on its way out element by element

#define MAT_A coopmat<A_T, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA>
#define MAT_B coopmat<B_T, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB>
#define MAT_ACC coopmat<ACC_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>
#define MAT_C coopmat<C_T, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>

const uint HELD_B = HOLD_B != 0 ? KF * NF : 1;  // the fragments of B in registers

// Fragment (kf, nf) of this workgroup's block of B, from shared memory.
MAT_B b_fragment(uint kf, uint nf) {
  MAT_B b;
  coopMatLoad(b, sh_b, kf * TK * SB + nf * (TN / UNIT), SB, gl_CooperativeMatrixLayoutRowMajor);
  return b;
}

// This subgroup's registers (globals: arrays sized by specialization constants cannot be passed to functions).
uvec4 ra[A_LOADS];     // the next strip of A on its way to shared memory
MAT_A fa[RF * KF];     // this strip's fragments of A
MAT_B fb[HELD_B];      // B's fragments, where held
MAT_ACC acc[RF * NF];  // this strip's part of C

MAT_ACC element_at;  // component e: the number (row * TN + column) of the fragment element it holds
// The same numbers as integers, kept once, where a fragment spreads evenly over the subgroup (COMPONENTS
// components an invocation: every device that lists these shapes so far): the epilogue's loop over them then
// unrolls and converts nothing an element (docs/design/thin.md).
const uint COMPONENTS = TM * TN / SG > 0u ? TM * TN / SG : 1u;
uint element_pos[COMPONENTS];

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

// Rows r0 .. r0+SR-1 of op(A) into this subgroup's area, zeros past M and K.
void stage_a(uint batch, uint r0, uint sg) {
  for (uint u = gl_SubgroupInvocationID; u < SR * (KP / UNIT); u += SG) {
    const uint r = r0 + u / (KP / UNIT), k = (u % (KP / UNIT)) * UNIT;
    uint v[8];
    [[unroll]] for (uint e = 0; e < UNIT; ++e) v[e] = r < p.M && k + e < p.K ? bits16(load_a(batch, r, k + e)) : 0u;
    sh_strip[sg * STRIP + (u / (KP / UNIT)) * SA + u % (KP / UNIT)] = unit_of(v);
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
  if (element_at.length() == int(COMPONENTS)) {
    [[unroll]] for (uint e = 0; e < COMPONENTS; ++e) element_pos[e] = uint(element_at[e]);
  }
}

// The fragment at (r, c) of C, element by element through this subgroup's staging area and store_c: beta C,
// edges, a bf16 C (the workgroup's barriers: every subgroup calls it alike).
void store_fragment(MAT_ACC frag, uint batch, uint r, uint c, uint sg) {
  const uint base = sg * TM * TN;
  coopMatStore(frag, sh_c, base, TN, gl_CooperativeMatrixLayoutRowMajor);
  barrier();
  for (uint e = gl_SubgroupInvocationID; e < TM * TN; e += SG) {
    const uint rr = r + e / TN, cc = c + e % TN;
    if (rr < p.M && cc < p.N) store_c(batch, rr, cc, sh_c[base + e]);
  }
  barrier();  // the next fragment overwrites the staging area
}

// The blocks whose strips load 16 bytes at a time (the same for every subgroup of the workgroup).
bool direct_block(uint block, uint rows_per_block) { return DIRECT_A != 0 && (block + 1) * rows_per_block <= p.M; }

// This subgroup's strip of op(A) = A (rows r0 ..), 16 bytes an invocation a load, into registers.
void fetch_strip(uint a_base, uint r0) {
  [[unroll]] for (uint i = 0; i < A_LOADS; ++i) {
    const uint u = gl_SubgroupInvocationID + i * SG;
    if (A_CHUNKS % SG != 0 && u >= A_CHUNKS) break;
    ra[i] = A4[(a_base + (r0 + u / (KP / UNIT)) * p.lda + (u % (KP / UNIT)) * UNIT) / UNIT];
  }
}

void sg_sync() {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

// The strip's fragments from this subgroup's area: from the registers fetched (`fetched`) or, element by
// element, from op(A) (the staged way).
void load_strip(bool fetched, uint batch, uint r0, uint sg) {
  if (fetched) {
    [[unroll]] for (uint i = 0; i < A_LOADS; ++i) {
      const uint u = gl_SubgroupInvocationID + i * SG;
      if (A_CHUNKS % SG != 0 && u >= A_CHUNKS) break;
      sh_strip[sg * STRIP + (u / (KP / UNIT)) * SA + u % (KP / UNIT)] = ra[i];
    }
  } else {
    stage_a(batch, r0, sg);
  }
  sg_sync();
  [[unroll]] for (uint rf = 0; rf < RF; ++rf) {
    [[unroll]] for (uint kf = 0; kf < KF; ++kf) {
      coopMatLoad(fa[rf * KF + kf], sh_strip, sg * STRIP + rf * TM * SA + kf * (TK / UNIT), SA,
                  gl_CooperativeMatrixLayoutRowMajor);
    }
  }
  sg_sync();  // the next strip overwrites the area
}

// Fragment f of the strip with alpha and the fused epilogue applied in registers.
MAT_ACC finished_fragment(uint f, uint r0, uint col0) {
  const uint rf = f / NF, nf = f % NF;
  MAT_ACC frag = acc[f];
  if (p.alpha != SCALAR_T(1)) frag = frag * ACC_T(p.alpha);
  if (epilogue_on()) {
    // A padding column's value is never stored: its bias is read in bounds, from the last column's place.
    // (The same loop for every fragment, padded or not: a copy for the fragments past N measured slower.)
    if (frag.length() == int(COMPONENTS)) {
      [[unroll]] for (uint e = 0; e < COMPONENTS; ++e) {
        const uint at = element_pos[e], col = min(col0 + nf * TN + at % TN, p.N - 1u);
        frag[e] = ACC_T(gemm_epilogue(EPI_T(frag[e]), r0 + rf * TM + at / TN, col));
      }
    } else {  // a device that spreads a fragment otherwise: each element's number converted where it is used
      for (int e = 0; e < frag.length(); ++e) {
        const uint at = uint(element_at[e]), col = min(col0 + nf * TN + at % TN, p.N - 1u);
        frag[e] = ACC_T(gemm_epilogue(EPI_T(frag[e]), r0 + rf * TM + at / TN, col));
      }
    }
  }
  return frag;
}

#ifdef VKGEMM_BF16_C
// The strip's fragments one at a time through this subgroup's fragment area in fp32, each invocation rounding
// 8 elements of a row to bf16 (bf16_bits) and storing them as one 16-byte unit along C's row; a padded
// block's units past N are not stored.
void store_strip_bf16(uint r0, uint c_base, uint col0) {
  const uint base = gl_SubgroupID * TM * TN;
  [[unroll]] for (uint f = 0; f < RF * NF; ++f) {
    const uint rf = f / NF, nf = f % NF;
    coopMatStore(finished_fragment(f, r0, col0), sh_c, base, TN, gl_CooperativeMatrixLayoutRowMajor);
    sg_sync();
    for (uint e = gl_SubgroupInvocationID * C_UNIT; e < TM * TN; e += SG * C_UNIT) {
      const uint col = col0 + nf * TN + e % TN;
      if (col >= p.N) continue;
      uvec4 w;
      [[unroll]] for (uint q = 0; q < 4; ++q) {
        w[q] = bf16_pair(sh_c[base + e + 2 * q], sh_c[base + e + 2 * q + 1]);
      }
      C4[(c_base + (r0 + rf * TM + e / TN) * p.ldc + col) / C_UNIT] = w;
    }
    sg_sync();  // the next fragment overwrites the area
  }
}
#else
// The strip's 16-byte units of C from this subgroup's area (at base) out along C's rows; a padded block's units
// past N are not stored.
void store_units(uint base, uint r0, uint c_base, uint col0, bool padded) {
  [[unroll]] for (uint i = 0; i < C_STORES; ++i) {
    const uint u = gl_SubgroupInvocationID + i * SG;
    if (C_CHUNKS % SG != 0 && u >= C_CHUNKS) break;
    const uint col = col0 + (u % (NP / C_UNIT)) * C_UNIT;
    if (padded && col >= p.N) continue;
    C4[(c_base + (r0 + u / (NP / C_UNIT)) * p.ldc + col) / C_UNIT] =
        sh_strip[base + (u / (NP / C_UNIT)) * SC + u % (NP / C_UNIT)];
  }
}

// The strip's RF x NF fragments of C through this subgroup's area of shared memory, in C's type, then out 16
// bytes an invocation a store along C's rows (alpha and the epilogue applied in registers first).
void store_strip_vectors(uint r0, uint c_base, uint col0) {
  const uint base = gl_SubgroupID * STRIP;
  [[unroll]] for (uint f = 0; f < RF * NF; ++f) {
    const uint rf = f / NF, nf = f % NF;
    coopMatStore(MAT_C(finished_fragment(f, r0, col0)), sh_strip, base + rf * TM * SC + nf * (TN / C_UNIT), SC,
                 gl_CooperativeMatrixLayoutRowMajor);
  }
  sg_sync();
  // Two copies of the loop: the test of each unit's column only where the block has padding columns.
  if (col0 + NP <= p.N) store_units(base, r0, c_base, col0, false);
  else store_units(base, r0, c_base, col0, true);
  sg_sync();  // the next strip overwrites the area
}
#endif

void main() {
  const uint sg = gl_SubgroupID;
  const uint batch = gemm_batch();
  const uint col0 = gl_WorkGroupID.y * NP;
  const uint a_base = p.a_offset + batch * p.stride_a;
  const uint c_base = p.c_offset + batch * p.stride_c;

  stage_b(batch, col0);
  barrier();
  [[unroll]] for (uint f = 0; f < HELD_B; ++f) fb[f] = b_fragment(f / NF, f % NF);
  // Stores 16 bytes at a time: beta 0, C's rows and offset in 16 bytes (8 elements), the workgroup's columns
  // inside N in whole 16-byte units (a block's padding fragments past N are not stored); then per block, its
  // rows inside M.
  const bool c_vectors = (p.flags & GEMM_BETA_ZERO) != 0u && c_base % 8 == 0 && p.ldc % 8 == 0 &&
                         (col0 + NP <= p.N || p.N % C_UNIT == 0);
  if (c_vectors && epilogue_on()) number_elements(sg);

  // The blocks grid-stride. A block whose strips load 16 bytes at a time has them fetched into registers
  // before the previous block's multiplies and stores (PREFETCH) or after them; a staged one when its turn
  // comes.
  const uint rows_per_block = SUBGROUPS * SR;
  const uint blocks = (p.M + rows_per_block - 1) / rows_per_block;
  const uint stride = gl_NumWorkGroups.x;
  uint block = gl_WorkGroupID.x;
  if (block < blocks && direct_block(block, rows_per_block)) fetch_strip(a_base, block * rows_per_block + sg * SR);
  for (; block < blocks; block += stride) {
    const uint r0 = block * rows_per_block + sg * SR, next = block + stride;
    const bool next_direct = next < blocks && direct_block(next, rows_per_block);
    load_strip(direct_block(block, rows_per_block), batch, r0, sg);
    if (PREFETCH != 0 && next_direct) fetch_strip(a_base, r0 + stride * rows_per_block);
    [[unroll]] for (uint nf = 0; nf < NF; ++nf) {
      [[unroll]] for (uint rf = 0; rf < RF; ++rf) acc[rf * NF + nf] = MAT_ACC(ACC_T(0));
      [[unroll]] for (uint kf = 0; kf < KF; ++kf) {
        const MAT_B b = HOLD_B != 0 ? fb[kf * NF + nf] : b_fragment(kf, nf);
        [[unroll]] for (uint rf = 0; rf < RF; ++rf) {
          acc[rf * NF + nf] = coopMatMulAdd(fa[rf * KF + kf], b, acc[rf * NF + nf]);
        }
      }
    }
    const bool inside = (block + 1) * rows_per_block <= p.M;  // the same for every subgroup
    if (c_vectors && inside) {
#ifdef VKGEMM_BF16_C
      store_strip_bf16(r0, c_base, col0);
#else
      store_strip_vectors(r0, c_base, col0);
#endif
    } else {
      [[unroll]] for (uint f = 0; f < RF * NF; ++f) {
        store_fragment(acc[f], batch, r0 + (f / NF) * TM, col0 + (f % NF) * TN, sg);
      }
    }
    if (PREFETCH == 0 && next_direct) fetch_strip(a_base, r0 + stride * rows_per_block);
  }
}
