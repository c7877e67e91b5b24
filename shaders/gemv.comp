#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// The skinny kernel: GEMV and products with a small side (M or N at most GEMM_GEMV_MAX_SMALL), which are
// bound by reading the large operand once, not by arithmetic. docs/design/gemv.md says why it is built so.
//
// The product seen from its large operand L (R x K) and its small one (K x S):
//   N small (SMALL_M 0): L = op(A) (R = M), small = op(B), C(r, s);
//   M small (SMALL_M 1): L = op(B)^T (R = N), small = op(A)^T, C(s, r).
// A workgroup of WG invocations computes RW = RLANES * RPI rows of L against SB columns of the small operand
// (the grid's y covers S in SB-wide blocks, so any product runs, a skinny one in one block). Its invocations
// are RLANES groups of KLANES that split K between them; each holds RPI x SB sums in registers, and the
// groups' sums meet in shared memory once at the end, where KLANES invocations' partial sums of one output are
// added and stored through store_c (alpha, beta, the epilogue, C's type).
//
// The large operand is read once, coalesced, along whichever dimension it is contiguous in (R_CONTIG): along
// k (op(A) = A untransposed, op(B) = B^T) an invocation reads 4 consecutive k of RPI rows, neighbours the next
// 4; along r (A^T, B untransposed) it reads RPI (4, or 8 for 16-bit elements: 16 bytes either way)
// consecutive r at one k, neighbours the next RPI, and the KLANES invocations of a column walk K. Each
// invocation issues UNROLL steps' loads before their sums, so that enough bytes are in flight to cover the
// memory's latency. Where the variant has a vector type of the stored elements (GEMV_VEC: f32, f64, i32, f16;
// GEMV_VEC16: f16 and bf16 eight at a time) and the operand's ld, offset and batch stride are multiples of the
// vector (the flags' GEMM_VEC_A or GEMM_VEC_B: 4 elements, 8 for the 16-bit types), those elements are one
// vector load; elsewhere, and at the edges, element by element with zeros outside. The small operand is read
// element by element (its few columns stay in the caches: every row of L reads the same ones).
//
// K may be split across workgroups (the host's k_split below K): the grid's z is then slices x batch, and the
// slices meet in this same pass, not in a second one: each workgroup stores its raw sums to the workspace
// (binding 4) and counts itself on its C block's counter there; the one that counts last adds every slice's
// sums, in slice order, and stores C through store_c (below, "The K slices meet").
//
// Sums: ACC_T (fp32 for f16 and bf16, i32 for i8 and u8, the type's own for f32 and f64); each output is the
// sum over KLANES invocations of their strided partial sums, an order as valid as any (docs/correctness.md's
// bounds hold for every order).
#include "gemm_interface.glsl"

layout(constant_id = 0) const uint WG = 256;       // invocations per workgroup
layout(constant_id = 1) const uint SB = 1;         // columns of the small operand per workgroup (1 to GEMM_GEMV_MAX_SMALL)
layout(constant_id = 2) const uint SMALL_M = 0;    // 1: M is the small side (L is op(B)^T); 0: N is
layout(constant_id = 3) const uint R_CONTIG = 0;   // 1: L's elements are contiguous along r; 0: along k
layout(constant_id = 4) const uint KLANES = 32;    // invocations splitting K for the same rows (divides WG)
layout(constant_id = 5) const uint RPI = 1;        // rows of L per invocation (4 or 8 where R_CONTIG)
layout(local_size_x_id = 0) in;

const uint RLANES = WG / KLANES;
// Steps of K an invocation loads before it sums any: loads in flight to cover the memory's latency.
const uint UNROLL = 4;
const uint RW = RLANES * RPI;

#ifdef GEMV_VEC
layout(std430, set = 0, binding = 0) readonly buffer MatrixA4 { VEC_T A4[]; };
layout(std430, set = 0, binding = 1) readonly buffer MatrixB4 { VEC_T B4[]; };
#endif
#ifdef GEMV_VEC16
// 16-bit elements (f16, bf16) eight at a time: one 16-byte load, the flag's alignment a multiple of 8 elements.
layout(std430, set = 0, binding = 0) readonly buffer MatrixA8 { uvec4 A8[]; };
layout(std430, set = 0, binding = 1) readonly buffer MatrixB8 { uvec4 B8[]; };
#endif

shared ACC_T red[WG * SB];  // the partial sums of one row slot, [invocation][column]

// The workspace where K is split: each slice's raw sums (slice-major per batch entry, M x N each with row
// stride N, split_stride apart), then one counter per workgroup of a slice (x, y and the batch entry), which
// every call leaves at zero (the host zeroes them once, as the plan is made). Both views are coherent: the
// sums a workgroup stores are read by another workgroup in the same dispatch.
layout(std430, set = 0, binding = 4) coherent buffer SliceSums { ACC_T W[]; };
layout(std430, set = 0, binding = 4) coherent buffer SliceCounters { uint counter[]; };
#ifdef VKGEMM_EPILOGUE_DOUBLE
const uint ACC_WORDS = 2;  // 32-bit words of an ACC_T: where the counters start after the sums
#else
const uint ACC_WORDS = 1;  // fp32 and i32 (fp16 sums never split)
#endif

uint large_base(uint batch) { return SMALL_M != 0u ? p.b_offset + batch * p.stride_b : p.a_offset + batch * p.stride_a; }
uint large_ld() { return SMALL_M != 0u ? p.ldb : p.lda; }
bool large_vec() { return (p.flags & (SMALL_M != 0u ? GEMM_VEC_B : GEMM_VEC_A)) != 0u; }

// Element i of the large operand's binding, widened.
ACC_T large_at(uint i) { return ACC_T(SMALL_M != 0u ? WIDEN(B[i]) : WIDEN(A[i])); }

// Elements i .. i + 3 (i a multiple of 4 where large_vec()), as a vector load where the variant has one.
void large4(uint i, out ACC_T v[4]) {
#ifdef GEMV_VEC
  const VEC_T w = SMALL_M != 0u ? B4[i / 4u] : A4[i / 4u];
  [[unroll]] for (uint t = 0; t < 4u; ++t) v[t] = ACC_T(w[t]);
#else
  [[unroll]] for (uint t = 0; t < 4u; ++t) v[t] = large_at(i + t);
#endif
}

#ifdef GEMV_VEC16
// A word's two 16-bit elements, widened exactly; the lower half is the earlier element.
vec2 widen_pair(uint w) {
#ifdef VKGEMM_BF16
  return vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u));
#else
  return unpackHalf2x16(w);
#endif
}

// Elements i .. i + 7 (i a multiple of 8 where large_vec()), as one 16-byte load.
void large8(uint i, out ACC_T v[8]) {
  const uvec4 w = SMALL_M != 0u ? B8[i / 8u] : A8[i / 8u];
  [[unroll]] for (uint t = 0; t < 4u; ++t) {
    const vec2 h = widen_pair(w[t]);
    v[2u * t] = ACC_T(h.x);
    v[2u * t + 1u] = ACC_T(h.y);
  }
}
#endif

// Element (k, s) of the small operand: op(B)(k, s), or op(A)(s, k) where M is small; 0 outside the slice's
// K range (its neighbour's elements may be infinite: 0 times them would be NaN).
ACC_T small_at(uint batch, uint k, uint k_end, uint s, uint S) {
  if (k >= k_end || s >= S) return ACC_T(0);
  return ACC_T(SMALL_M != 0u ? load_a(batch, s, k) : load_b(batch, k, s));
}

void main() {
  const uint slices = p.K == 0u ? 1u : (p.K + p.k_split - 1u) / p.k_split;
  const uint batch = gl_WorkGroupID.z / slices, slice = gl_WorkGroupID.z % slices;
  const uint k_begin = slice * p.k_split, k_end = min(p.K, k_begin + p.k_split);
  const uint R = SMALL_M != 0u ? p.N : p.M;
  const uint S = SMALL_M != 0u ? p.M : p.N;
  const uint id = gl_LocalInvocationIndex;
  // Neighbouring invocations along L's contiguous dimension.
  const uint kl = R_CONTIG != 0u ? id / RLANES : id % KLANES;
  const uint rl = R_CONTIG != 0u ? id % RLANES : id / KLANES;
  const uint r0 = gl_WorkGroupID.x * RW + rl * RPI;
  const uint s0 = gl_WorkGroupID.y * SB;
  const uint base = large_base(batch), ld = large_ld();
  const bool vec = large_vec();

  ACC_T acc[RPI][SB];
  [[unroll]] for (uint j = 0; j < RPI; ++j) {
    [[unroll]] for (uint s = 0; s < SB; ++s) acc[j][s] = ACC_T(0);
  }

  if (R_CONTIG == 0u) {  // L(r, k) at base + r * ld + k: 4 consecutive k of each of RPI rows, UNROLL groups
    for (uint k0 = k_begin + kl * 4u; k0 < k_end; k0 += UNROLL * KLANES * 4u) {
      ACC_T l[UNROLL][RPI][4];
      [[unroll]] for (uint u = 0; u < UNROLL; ++u) {  // every load of the step before any sum
        const uint k = k0 + u * KLANES * 4u;
        [[unroll]] for (uint j = 0; j < RPI; ++j) {
          const uint r = r0 + j;
          const uint at = base + r * ld + k;
          if (r < R && vec && k + 4u <= k_end) {
            ACC_T v[4];
            large4(at, v);
            [[unroll]] for (uint t = 0; t < 4u; ++t) l[u][j][t] = v[t];
          } else {
            [[unroll]] for (uint t = 0; t < 4u; ++t) l[u][j][t] = (r < R && k + t < k_end) ? large_at(at + t) : ACC_T(0);
          }
        }
      }
      [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
        const uint k = k0 + u * KLANES * 4u;
        [[unroll]] for (uint s = 0; s < SB; ++s) {
          [[unroll]] for (uint t = 0; t < 4u; ++t) {
            const ACC_T x = small_at(batch, k + t, k_end, s0 + s, S);
            [[unroll]] for (uint j = 0; j < RPI; ++j) acc[j][s] += l[u][j][t] * x;
          }
        }
      }
    }
  } else {  // L(r, k) at base + k * ld + r: RPI consecutive r at one k, UNROLL values of k
    for (uint k0 = k_begin + kl; k0 < k_end; k0 += UNROLL * KLANES) {
      ACC_T l[UNROLL][RPI];
      [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
        const uint k = k0 + u * KLANES;
        const uint at = base + k * ld + r0;
#ifdef GEMV_VEC16
        if (RPI == 8u && vec && r0 + 8u <= R && k < k_end) {  // the 8 rows in one load
          ACC_T v[8];
          large8(at, v);
          [[unroll]] for (uint j = 0; j < RPI; ++j) l[u][j] = v[j];
          continue;
        }
#endif
        [[unroll]] for (uint g = 0; g < RPI / 4u; ++g) {  // RPI a multiple of 4 here
          if (vec && r0 + 4u * g + 4u <= R && k < k_end) {
            ACC_T v[4];
            large4(at + 4u * g, v);
            [[unroll]] for (uint t = 0; t < 4u; ++t) l[u][4u * g + t] = v[t];
          } else {
            [[unroll]] for (uint t = 0; t < 4u; ++t) {
              const uint j = 4u * g + t;
              l[u][j] = (r0 + j < R && k < k_end) ? large_at(at + j) : ACC_T(0);
            }
          }
        }
      }
      [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
        const uint k = k0 + u * KLANES;
        [[unroll]] for (uint s = 0; s < SB; ++s) {
          const ACC_T x = small_at(batch, k, k_end, s0 + s, S);
          [[unroll]] for (uint j = 0; j < RPI; ++j) acc[j][s] += l[u][j] * x;
        }
      }
    }
  }

  // The KLANES partial sums of each output, one row slot at a time through shared memory. The outputs are
  // walked so that neighbouring invocations store neighbouring elements of C: along s where N is small (C's
  // rows are r), along r where M is small.
  const uint slot = (rl * KLANES + kl) * SB;
  [[unroll]] for (uint j = 0; j < RPI; ++j) {
    barrier();  // the previous slot's sums are read
    [[unroll]] for (uint s = 0; s < SB; ++s) red[slot + s] = acc[j][s];
    barrier();
    for (uint o = id; o < RLANES * SB; o += WG) {
      const uint orl = SMALL_M != 0u ? o % RLANES : o / SB;
      const uint s = SMALL_M != 0u ? o / RLANES : o % SB;
      ACC_T sum = ACC_T(0);
      for (uint q = 0; q < KLANES; ++q) sum += red[(orl * KLANES + q) * SB + s];
      const uint r = gl_WorkGroupID.x * RW + orl * RPI + j;
      if (r < R && s0 + s < S) {
        const uint row = SMALL_M != 0u ? s0 + s : r, col = SMALL_M != 0u ? r : s0 + s;
        if (slices > 1u) {
          W[gl_WorkGroupID.z * p.split_stride + row * p.N + col] = sum;  // raw: the last slice finishes it
        } else {
          store_c(batch, row, col, sum);
        }
      }
    }
  }
  if (slices == 1u) return;

  // The K slices meet: the workgroup that counts last on its C block's counter adds the slices' sums and
  // stores C. Release: each invocation's sums are made visible at device scope (memoryBarrierBuffer on a
  // coherent buffer) before the workgroup's barrier, after which one invocation counts the workgroup done.
  // Acquire: the last one's invocations see every slice's sums after the count, the same fence and a barrier.
  // The sum runs over the slices in their order, whichever workgroup is last, so a result does not depend on
  // the order workgroups finish in; it is the same sum splitk_reduce.comp made in a pass of its own.
  memoryBarrierBuffer();
  barrier();
  if (id == 0u) {
    const uint counters = gl_NumWorkGroups.z * p.split_stride * ACC_WORDS;  // the first counter's word
    const uint at = counters + (batch * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const bool last = atomicAdd(counter[at], 1u) == slices - 1u;
    // Every slice of the block has counted, so nothing reads the counter again in this call: zero for the next
    // (a recorded command buffer replays with no clearing pass).
    if (last) counter[at] = 0u;
    // Told to the workgroup in red[0], free after the barrier above: a shared variable of its own would pass
    // the shared memory the host counts (shared_bytes) where red fills it.
    red[0] = last ? ACC_T(1) : ACC_T(0);
    memoryBarrierBuffer();
  }
  barrier();
  if (red[0] == ACC_T(0)) return;
  memoryBarrierBuffer();
  // The block's outputs, neighbouring invocations on neighbouring elements of C (as the slots above).
  const uint first = batch * slices * p.split_stride;
  for (uint o = id; o < RW * SB; o += WG) {
    const uint r = gl_WorkGroupID.x * RW + (SMALL_M != 0u ? o % RW : o / SB);
    const uint s = SMALL_M != 0u ? o / RW : o % SB;
    if (r >= R || s0 + s >= S) continue;
    const uint row = SMALL_M != 0u ? s0 + s : r, col = SMALL_M != 0u ? r : s0 + s;
    ACC_T sum = ACC_T(0);
    for (uint z = 0; z < slices; ++z) sum += W[first + z * p.split_stride + row * p.N + col];
    store_c(batch, row, col, sum);
  }
}
