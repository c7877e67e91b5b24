// The interface every vkgemm GEMM kernel shares with the host (gemm_abi.h, which the host includes too).
// Built once per element type: ELEM_T is the stored type, ACC_T the accumulator. A_T, B_T and C_T (the
// stored types of each operand) default to ELEM_T; alpha and beta have type SCALAR_T, the accumulator's
// except with VKGEMM_F16 (f16 inputs), where they are float whatever the accumulator (16-bit push constants
// are an optional feature). VKGEMM_F16 turns on 16-bit arithmetic and storage; f16 inputs give C of
// float (C_T) or float16_t.
// VKGEMM_BF16 (bf16 inputs) and VKGEMM_INT8 (i8 or u8 inputs, A_T and B_T int8_t or uint8_t) store A and B
// narrow and widen each element as it is loaded (LOAD_T: float, int), so the kernels compute in ELEM_T
// (float, int) and need only 16- or 8-bit storage, no 16- or 8-bit arithmetic. VKGEMM_BF16_C: C is bf16
// too, read widened and written rounded to nearest even.
// VKGEMM_BF16_MMA (with VKGEMM_BF16: the cooperative-matrix kernels' bf16): A and B are bfloat16_t
// (GL_EXT_bfloat16), the matrices' component type, and C with VKGEMM_BF16_C; the sums, alpha and beta float.
//
// Kernels see one row-major problem per batch entry: C = alpha * op(A) * op(B) + beta * C, where op(A) is
// M x K and op(B) is K x N. Column-major calls are turned into row-major ones on the host (C^T = op(B)^T
// op(A)^T: swap the operands, keep the transposes). A kernel touches the matrices only through
//   load_a(batch, row, k)     element (row, k) of op(A), as LOAD_T (A_T but for bf16 and i8/u8); 0 <= row < M,
//                             0 <= k < K
//   load_b(batch, k, col)     element (k, col) of op(B), as LOAD_T
//   store_c(batch, row, col, acc)   C = epilogue(alpha * acc + beta * C) (epilogue.glsl; none unless the
//                             host set one); C is never read when beta is 0
//   gemm_batch()              the batch entry of this workgroup (gl_WorkGroupID.z)
// and must call store_c exactly once per (row, col) in range. Bounds are the kernel's job.
#include "gemm_abi.h"

#ifdef VKGEMM_BF16
#extension GL_EXT_shader_16bit_storage : require
#define LOAD_T float
#ifdef VKGEMM_BF16_C
// fp32 to bf16, rounded to nearest, ties to even (a carry into the exponent is right: the largest finite
// values round up to infinity); NaN stays NaN, quieted.
uint bf16_bits(float r) {
  const uint u = floatBitsToUint(r);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
// Two values rounded to bf16 and packed into a word, the first in the low bits (C's order in memory).
uint bf16_pair(float first, float second) { return bf16_bits(first) | (bf16_bits(second) << 16); }
#endif
#ifdef VKGEMM_BF16_MMA
#extension GL_EXT_bfloat16 : require
#define A_T bfloat16_t
#define B_T bfloat16_t
#define WIDEN(x) float(x)  // exact: every bf16 value is an fp32
#ifdef VKGEMM_BF16_C
// The rounded bits as a bfloat16_t through fp32, where the value is exact (bit casts to bfloat16_t take
// 16-bit integers, which need shaderInt16).
#define C_LOAD(x) float(x)
#define C_STORE(r) bfloat16_t(uintBitsToFloat(bf16_bits(r) << 16))
#endif
#else
#ifndef A_T  // the split's reduce pass reads an fp32 workspace as A
#define A_T uint16_t
#define B_T uint16_t
#endif
#define WIDEN(x) uintBitsToFloat(uint(x) << 16)  // bf16 is the upper half of an fp32
#ifdef VKGEMM_BF16_C
#define C_LOAD(x) WIDEN(x)
#define C_STORE(r) uint16_t(bf16_bits(r))
#endif
#endif
#endif
// VKGEMM_INT8_MMA (the cooperative-matrix kernels' i8 and u8): A and B stay 8-bit (A_T int8_t or uint8_t,
// the matrices' component type), the sums and C are 32-bit integers (int, or uint for u8, whose shapes sum
// in u32: the same bits as i32 arithmetic modulo 2^32), and so are alpha and beta.
#ifdef VKGEMM_INT8_MMA
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_8bit_storage : require
#endif
#ifdef VKGEMM_INT8
#extension GL_EXT_shader_8bit_storage : require
#define LOAD_T int
#define WIDEN(x) int(x)  // i8 sign-extends, u8 zero-extends
#endif
// VKGEMM_DEQUANT (with VKGEMM_INT8 or VKGEMM_INT8_MMA): an int8 product into float C (C_T float, or float16_t
// with VKGEMM_DEQUANT_F16, a 16-bit word in storage; an f16 matrix in the matrix kernels). The integer sums
// are converted and scaled in fp32 (epilogue.glsl's dequant_scale) before alpha, beta C and the epilogue,
// all fp32: SCALAR_T is float.
#ifdef VKGEMM_DEQUANT_F16
#extension GL_EXT_shader_16bit_storage : require
#ifdef VKGEMM_INT8_MMA
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#endif

#ifndef A_T
#define A_T ELEM_T
#endif
#ifndef B_T
#define B_T ELEM_T
#endif
#ifdef VKGEMM_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#define SCALAR_T float
#elif defined(VKGEMM_DEQUANT)
#define SCALAR_T float
#else
#define SCALAR_T ACC_T
#endif
#ifndef C_T
#define C_T ELEM_T
#endif
#ifndef LOAD_T
#define LOAD_T A_T
#define WIDEN(x) (x)
#endif
#ifndef C_LOAD
#define C_LOAD(x) SCALAR_T(x)
#define C_STORE(r) C_T(r)
#endif

layout(std430, set = 0, binding = 0) readonly buffer MatrixA { A_T A[]; };
layout(std430, set = 0, binding = 1) readonly buffer MatrixB { B_T B[]; };
layout(std430, set = 0, binding = 2) buffer MatrixC { C_T C[]; };  // read only when beta != 0

// The fused epilogue's type (epilogue.glsl), its parameters' in the block below: the sums' precision (float
// for f32, f16 and bf16 inputs and the dequantized int8 products, double for f64). Integer C has no epilogue;
// its block keeps the words, as float.
#ifdef VKGEMM_EPILOGUE_DOUBLE
#define EPI_T double
#else
#define EPI_T float
#endif

// The push-constant block, its flag bits (GEMM_TRANS_A, ..., GEMM_VEC_C) and the kernels' specialization-
// constant ids are gemm_abi.h's, shared with the host.
#define GEMM_PUSH_UINT_FIELD(name) uint name;
layout(push_constant) uniform GemmParams {
  GEMM_PUSH_UINT_FIELDS(GEMM_PUSH_UINT_FIELD)
  layout(offset = GEMM_PUSH_SCALARS_OFFSET) SCALAR_T alpha;
  SCALAR_T beta;
  layout(offset = GEMM_PUSH_EPILOGUE_OFFSET) uint epilogue;  // the fused epilogue (epilogue.glsl); 0: none
  uint bias_offset;
  layout(offset = GEMM_PUSH_ACT_OFFSET) EPI_T act_a;  // its parameters, in its own type (gemm_abi.h)
  EPI_T act_b;
  layout(offset = GEMM_PUSH_SCALE_OFFSET) uint scale;  // the dequantization (GEMM_SCALE_*; dequant_scale)
  uint scale_offset;
} p;

#include "epilogue.glsl"

uint gemm_batch() { return gl_WorkGroupID.z; }

// Grouped order: workgroups launch in x-fastest order; this remaps them so that consecutive ones walk down
// a group of group_m block rows before moving right, keeping the A rows and B columns they share in L2.
// Returns the (column, row) of the C block this workgroup computes; group_m 1 keeps the launch order.
uvec2 grouped_workgroup(uint group_m) {
  uint bx = gl_WorkGroupID.x, by = gl_WorkGroupID.y;
  if (group_m > 1) {
    const uint gx = gl_NumWorkGroups.x, gy = gl_NumWorkGroups.y;
    const uint linear = by * gx + bx;
    const uint first_row = (linear / (group_m * gx)) * group_m;
    const uint rows = min(gy - first_row, group_m);
    const uint in_group = linear % (group_m * gx);
    by = first_row + in_group % rows;
    bx = in_group / rows;
  }
  return uvec2(bx, by);
}

LOAD_T load_a(uint batch, uint row, uint k) {
  const uint at = (p.flags & GEMM_TRANS_A) != 0u ? k * p.lda + row : row * p.lda + k;
  return WIDEN(A[p.a_offset + batch * p.stride_a + at]);
}

LOAD_T load_b(uint batch, uint k, uint col) {
  const uint at = (p.flags & GEMM_TRANS_B) != 0u ? col * p.ldb + k : k * p.ldb + col;
  return WIDEN(B[p.b_offset + batch * p.stride_b + at]);
}

void store_c(uint batch, uint row, uint col, ACC_T acc) {
  const uint at = p.c_offset + batch * p.stride_c + row * p.ldc + col;
#ifdef VKGEMM_DEQUANT
  SCALAR_T r = p.alpha * (float(acc) * dequant_scale(row, col));
#else
  SCALAR_T r = p.alpha * SCALAR_T(acc);
#endif
  if ((p.flags & GEMM_BETA_ZERO) == 0u) {
    r += p.beta * C_LOAD(C[at]);
  }
#ifndef VKGEMM_NO_EPILOGUE
  if (epilogue_on()) r = SCALAR_T(gemm_epilogue(EPI_T(r), row, col));
#endif
  C[at] = C_STORE(r);
}
