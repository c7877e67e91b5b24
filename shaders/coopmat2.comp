#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
// f16, bf16 and int8 GEMM on workgroup-scope cooperative matrices (VK_NV_cooperative_matrix2). Built with
// VKGEMM_F16, VKGEMM_BF16_MMA (A_T bfloat16_t, fp32 sums; C_T float, or bfloat16_t with VKGEMM_BF16_C: see
// MAT_C) or VKGEMM_INT8_MMA (A_T int8_t or uint8_t; the sums and C int, or uint for u8; with VKGEMM_DEQUANT,
// C float or float16_t: MAT_OUT below); int8 is never split along K: the host plans one slice.
//
// The whole workgroup owns one BM x BN accumulator, and A and B go straight from the buffers into BM x BK
// and BK x BN matrices through tensor layouts (the driver stages them through shared memory and schedules
// the tensor-core work itself). Tiles wholly inside the matrices use plain layouts; edge tiles and the last,
// partial step along K use clamped layouts, which read zeros outside the matrix. Edge tiles store the
// result through a clamped layout too, which drops the elements outside C: any size, no padding; tiles
// inside an aligned C through a plain one (store_result). alpha and beta are applied to the whole
// accumulator (beta * C loaded through the store's layout, only when beta is not 0); each batch entry reads
// and writes its matrices batch * stride along.
// Split-K (as blocked.comp): z = batch * slices + slice; slice s sums the K range [s * k_split, ...) and,
// where the host sets split_stride (several slices, or a bf16 C read for beta), writes its raw partial
// block to the workspace bound as C (C_T is then float), C + z * split_stride with row stride ldc;
// splitk_reduce.comp adds them into C with alpha and beta.
// A transposed operand (TRANS_A: A stored K x M; TRANS_B: B stored N x K) is sliced in its stored order and
// loaded through a transposing tensor view.
// The fast path -- a tile wholly inside the matrices, 16-byte aligned rows and offsets, a K start that is a
// multiple of 256 (the host rounds split-K slices to 256) -- has its own accumulator, loop and store, and
// returns: the general path's clamped layouts and loops do not share its registers. There the strides,
// offsets and K start are rounded down to 16 bytes (ALIGN elements; 256 for K), which changes nothing but tells the
// compiler that wide loads are safe. That matters: without those hints the driver's tensor loads run
// several times slower, and so does a split-K whose K start the compiler cannot see is a multiple of 8
// (docs/design/coopmat2.md).
#include "gemm_interface.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;  // the workgroup size (also local_size_x)
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;
// 1: the fast path loads step k+1's tiles before multiplying step k's (software pipelining), in place of
// the unrolled loop. No tile uses it, since the unrolled loop is faster; it stays for the experiment knob
// (prefetch=1).
layout(constant_id = 4) const uint PREFETCH = 0;
layout(constant_id = 5) const uint TRANS_A = 0;  // the same as the push constants' GEMM_TRANS_A, known at build
layout(constant_id = 6) const uint TRANS_B = 0;
layout(constant_id = 7) const uint GROUP_M = 1;  // block rows walked together (grouped_workgroup); 1: launch order
// K steps per iteration of the fast loop, unrolled in the source: one straight run of UNROLL loads and
// multiplies that the driver's scheduler can interleave (docs/design/coopmat2.md).
layout(constant_id = 8) const uint UNROLL = 1;

#define CLAMP gl_CooperativeMatrixClampModeConstantNV
#define MAT_A coopmat<A_T, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define MAT_B coopmat<B_T, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>
// 16 bytes of A and B in elements: the alignment of the fast path's rows and offsets.
#ifdef VKGEMM_INT8_MMA
const uint ALIGN = 16;
#else
const uint ALIGN = 8;
#endif
#define MAT_ACC coopmat<ACC_T, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#ifdef VKGEMM_BF16_C
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// A bf16 C: devices list bf16 only as A and B, not as an accumulator. The sums' bf16 bits go out as the bits
// of an f16 accumulator of C's size (to_c), stored through C's binding viewed as 16-bit words (C16): a matrix
// of the sums' own use keeps their layout, where a conversion into an A matrix moved every element between
// invocations (docs/design/epilogue.md). The host runs this variant with beta 0 and one slice only; with beta
// or a split, a bf16 C goes through the fp32 workspace and the reduce pass.
#define MAT_C coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
layout(std430, set = 0, binding = 2) writeonly buffer MatrixC16 { float16_t C16[]; };
#define C_OUT C16
#else
#define MAT_C coopmat<C_T, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define C_OUT C
#endif

// Step k0's tiles of A and B through layouts la and lb (dimensioned in stored order by the setters below).
#define LOAD_A(mat, base, la, k0)                                                        \
  if (TRANS_A != 0)                                                                      \
    coopMatLoadTensorNV(mat, A, base, sliceTensorLayoutNV(la, k0, BK, row0, BM), tv);    \
  else                                                                                   \
    coopMatLoadTensorNV(mat, A, base, sliceTensorLayoutNV(la, row0, BM, k0, BK))
#define LOAD_B(mat, base, lb, k0)                                                        \
  if (TRANS_B != 0)                                                                      \
    coopMatLoadTensorNV(mat, B, base, sliceTensorLayoutNV(lb, col0, BN, k0, BK), tv);    \
  else                                                                                   \
    coopMatLoadTensorNV(mat, B, base, sliceTensorLayoutNV(lb, k0, BK, col0, BN))
// Dimensions are (rows, columns) of the stored matrix, K of them kd; strides (row stride, 1): row-major.
#define SET_A(la, kd, stride) \
  la = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(la, TRANS_A != 0 ? kd : p.M, TRANS_A != 0 ? p.M : kd), stride, 1)
#define SET_B(lb, kd, stride) \
  lb = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lb, TRANS_B != 0 ? p.N : kd, TRANS_B != 0 ? kd : p.N), stride, 1)

// The matrix alpha, beta C and the epilogue work on (MAT_OUT, of OUT_T): the accumulator itself, or for a
// dequantizing int8 product (VKGEMM_DEQUANT: float C) an fp32 matrix converted from the integer accumulator,
// each element multiplied by its column's scale (epilogue.glsl's dequant_scale, in a per-element callback
// only where the host set a scale vector: the per-tensor scale is in alpha). Then as for f16 inputs.
#ifdef VKGEMM_DEQUANT
#define OUT_T float
#define MAT_OUT coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
// Elements of an edge tile outside C (dropped by the clamped store) read no scale past the vector's end.
float scale_element(const in uint row, const in uint col, const in float x, const in uint row0, const in uint col0) {
  return row0 + row < p.M && col0 + col < p.N ? x * dequant_scale(row0 + row, col0 + col) : x;
}
MAT_OUT dequantize(MAT_ACC acc, uint row0, uint col0) {
  MAT_OUT x = MAT_OUT(acc);
  if (p.scale != 0u) {
    MAT_OUT scaled;
    coopMatPerElementNV(scaled, x, scale_element, row0, col0);
    x = scaled;
  }
  return x;
}
#define TO_OUT(acc, row0, col0) dequantize(acc, row0, col0)
#else
#define OUT_T ACC_T
#define MAT_OUT MAT_ACC
#define TO_OUT(acc, row0, col0) (acc)
#endif

// The fused epilogue (epilogue.glsl) on the tile at (row0, col0), where the host set one; not on a split-K
// slice's raw sums (the reduce pass applies it). Integer variants have none. Two forms, by what the driver
// runs fast (docs/design/epilogue.md):
// - fp32 sums (f16 and bf16 inputs, the dequantized int8 products) with an f32 or f16 bias, or none: the
//   bias vector loaded as a BM x BN matrix through C's layout `lc` with a stride of 0 along the axis it is
//   broadcast on (edge tiles read zeros outside C), added to the tile; then the activation over the matrix's
//   components, which are independent elements. The product then costs about what the plain one does.
// - otherwise: the per-element callback, the tile's origin in shared memory (passed as the callback's extra
//   arguments it cost more). fp16 sums take it because their bias is added in fp32, as the reference adds it;
//   a bf16 bias because devices list bf16 as no accumulator type. The store is in the workgroup's uniform
//   control flow, so the barrier is reached by all.
#ifdef VKGEMM_NO_EPILOGUE
#define APPLY_EPILOGUE(acc, lc, row0, col0)
#else
#if defined(VKGEMM_SUMS16)
const bool kEpilogueOnMatrix = false;
#define EPILOGUE_ON_MATRIX(acc, lc, row0, col0)
#else
const bool kEpilogueOnMatrix = kBiasAxis == 0u || kBiasType == GEMM_BIAS_F32 || kBiasType == GEMM_BIAS_F16;
layout(std430, set = 0, binding = GEMM_BIAS_BINDING) readonly buffer EpilogueF32 { float BIAS_F32[]; };
// The bias as a BM x BN matrix of `type` from `buffer`, added to the tile: element (r, c) of it is bias[c]
// (a column bias) or bias[r] (a row bias), through `lc` with the other axis's stride 0.
#define ADD_BIAS(acc, lc, row0, col0, type, buffer)                                              \
  {                                                                                              \
    coopmat<type, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> bias;                      \
    const uint rs = kBiasAxis == GEMM_BIAS_ROW ? 1u : 0u;                                        \
    coopMatLoadTensorNV(bias, buffer, p.bias_offset,                                             \
                        sliceTensorLayoutNV(setTensorLayoutStrideNV(lc, rs, 1u - rs), row0, BM, col0, BN)); \
    acc = acc + MAT_OUT(bias);                                                                   \
  }
// An f16 bias comes with an f16 C only, in variants that already store 16-bit values.
#if defined(VKGEMM_F16) || defined(VKGEMM_DEQUANT_F16)
layout(std430, set = 0, binding = GEMM_BIAS_BINDING) readonly buffer EpilogueF16 { float16_t BIAS_F16[]; };
#define ADD_BIAS_F16(acc, lc, row0, col0) \
  if (kBiasAxis != 0u && kBiasType == GEMM_BIAS_F16) ADD_BIAS(acc, lc, row0, col0, float16_t, BIAS_F16)
#else
#define ADD_BIAS_F16(acc, lc, row0, col0)
#endif
#define EPILOGUE_ON_MATRIX(acc, lc, row0, col0)                                                  \
  ADD_BIAS_F16(acc, lc, row0, col0)                                                              \
  if (kBiasAxis != 0u && kBiasType == GEMM_BIAS_F32) ADD_BIAS(acc, lc, row0, col0, float, BIAS_F32)     \
  if (kActivation != 0u) {                                                                       \
    for (int i = 0; i < acc.length(); ++i) acc[i] = OUT_T(epilogue_activation(EPI_T(acc[i]), kActivation)); \
  }
#endif
shared uint epilogue_origin[2];
OUT_T epilogue_element(const in uint row, const in uint col, const in OUT_T x) {
  return OUT_T(gemm_epilogue(EPI_T(x), epilogue_origin[0] + row, epilogue_origin[1] + col));
}
#define APPLY_EPILOGUE(acc, lc, row0, col0)                                            \
  if (epilogue_on()) {                                                              \
    if (kEpilogueOnMatrix) {                                                           \
      EPILOGUE_ON_MATRIX(acc, lc, row0, col0)                                          \
    } else {                                                                           \
      if (gl_LocalInvocationIndex == 0u) epilogue_origin = uint[2](row0, col0);       \
      barrier();                                                                       \
      MAT_OUT fused;                                                                   \
      coopMatPerElementNV(fused, acc, epilogue_element);                               \
      acc = fused;                                                                     \
    }                                                                                  \
  }
#endif

// The epilogue: C = epilogue(alpha * acc + beta * C), with beta * C read through the layout lc at the tile (row0,
// col0) (not at all when beta is 0); a split-K slice (partial) keeps its raw sums for the workspace. A
// macro: the two stores below use layouts of different types.
#ifdef VKGEMM_BF16_C
#define ADD_BETA_C(acc, lc, c_base, row0, col0)
#else
#define ADD_BETA_C(acc, lc, c_base, row0, col0)                                        \
  if ((p.flags & GEMM_BETA_ZERO) == 0u) {                                              \
    MAT_C c0;                                                                          \
    coopMatLoadTensorNV(c0, C, c_base, sliceTensorLayoutNV(lc, row0, BM, col0, BN));   \
    acc = acc + MAT_OUT(c0) * OUT_T(p.beta);                                           \
  }
#endif
#define APPLY_ALPHA_BETA(acc, lc, c_base, row0, col0, partial)                         \
  if (!(partial)) {                                                                    \
    if (p.alpha != SCALAR_T(1)) acc = acc * OUT_T(p.alpha);                            \
    ADD_BETA_C(acc, lc, c_base, row0, col0)                                            \
    APPLY_EPILOGUE(acc, lc, row0, col0)                                                \
  }

#ifdef VKGEMM_BF16_C
// The sums rounded to bf16 (bf16_bits: nearest, ties to even, overflow to infinity, NaN kept), component by
// component, each one's 16 bits moved unchanged into the f16 matrix's component (a bit cast, no arithmetic:
// no rounding, flushing or quieting touches them). c is not converted from acc first (that cost 4 % of a
// 4096^3 product): component i of an accumulator is the same element whatever its component type on the
// driver that lists coopmat2 (NVIDIA's; the GPU checks verify every bf16 C this kernel stores). The loop is
// unrolled: rolled, its components indexed at run time put both matrices in local memory (the driver's
// statistics, docs/design/epilogue.md).
MAT_C to_c(MAT_ACC acc) {
  MAT_C c;
  [[unroll]] for (int i = 0; i < c.length(); ++i) c[i] = unpackFloat2x16(bf16_bits(acc[i])).x;
  return c;
}
#define TO_C(acc) to_c(acc)
#else
#define TO_C(acc) MAT_C(acc)
#endif

// A tile wholly inside C with 16-byte aligned rows and offset: a plain layout, its stride and offset rounded
// down to multiples of 8 (which changes nothing but shows the compiler that wide stores are safe), as the
// fast path's loads do. The clamped layout's store costs every tile several microseconds more, which K-light
// products feel most (docs/design/coopmat2.md).
void store_inside(MAT_OUT acc, uint c_base, uint row0, uint col0, bool partial) {
  const uint c_off = c_base & ~7u;
  tensorLayoutNV<2> lc = createTensorLayoutNV(2);
  lc = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lc, p.M, p.N), p.ldc & ~7u, 1);
  APPLY_ALPHA_BETA(acc, lc, c_off, row0, col0, partial)
  MAT_C c = TO_C(acc);
  coopMatStoreTensorNV(c, C_OUT, c_off, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
}

// Any other tile, through a clamped layout, which drops the elements outside C.
void store_clamped(MAT_OUT acc, uint c_base, uint row0, uint col0, bool partial) {
  tensorLayoutNV<2, CLAMP> lc = createTensorLayoutNV(2, CLAMP);
  lc = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lc, p.M, p.N), p.ldc, 1);
  APPLY_ALPHA_BETA(acc, lc, c_base, row0, col0, partial)
  MAT_C c = TO_C(acc);
  coopMatStoreTensorNV(c, C_OUT, c_base, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
}

// C = alpha * acc + beta * C, or a split-K slice's raw sums to the workspace (partial).
void store_result(MAT_ACC acc, uint c_base, uint row0, uint col0, bool partial, bool inside) {
  if (inside && c_base % 8 == 0 && p.ldc % 8 == 0)
    store_inside(TO_OUT(acc, row0, col0), c_base, row0, col0, partial);
  else
    store_clamped(TO_OUT(acc, row0, col0), c_base, row0, col0, partial);
}

// A tile's first row or column: an edge tile on a side that is a multiple of 8 and at least a tile long
// starts a tile back from the side's end, so that it lies inside and takes the fast path in place of the
// general path's clamped, not unrolled loop (docs/design/coopmat2.md).
// It computes again the rows or columns it shares with its neighbour, and both store them:
// the same values, since each element is summed over the same K steps in the same order. Only where the
// store writes nothing but those values: beta 0 (C not read) or a split-K slice's raw sums; with beta,
// one tile could read C after the other wrote it.
uint tile_start(uint block, uint tile, uint side, bool shift) {
  uint start = block * tile;
  if (shift && start + tile > side && side >= tile && side % 8 == 0) start = side - tile;
  return start & ~7u;  // a multiple of 8 either way: the mask shows the compiler that wide accesses are safe
}

// A short product's tile (BM <= 16: the 16-row tile) whose columns lie inside C but whose rows pass M
// (2 to 15 rows): A through the clamped layout (zeros past M), B through the plain one in the fast path's
// unrolled loop, so that it takes about 16 rows' time rather than the general path's clamped, rolled loop
// over both; the clamped store drops the rows past M.
void short_rows_product(const uint row0, const uint col0, const uint a_base, const uint b_base, const uint c_base,
                        const uint k_begin, const uint k_end, const bool partial) {
  tensorViewNV<2, false, 1, 0> tv = createTensorViewNV(2, false, 1, 0);
  tensorLayoutNV<2> lb = createTensorLayoutNV(2);
  tensorLayoutNV<2, CLAMP> la_clamp = createTensorLayoutNV(2, CLAMP);
  tensorLayoutNV<2, CLAMP> lb_clamp = createTensorLayoutNV(2, CLAMP);
  SET_A(la_clamp, k_end, p.lda);
  SET_B(lb_clamp, k_end, p.ldb);
  SET_B(lb, p.K, p.ldb & ~(ALIGN - 1));
  const uint b_off = b_base & ~(ALIGN - 1);
  uint k0 = k_begin;
  MAT_ACC acc = MAT_ACC(ACC_T(0));
  for (uint i = (k_end - k0) / (BK * UNROLL); i > 0; --i) {
    [[unroll]] for (uint j = 0; j < UNROLL; ++j) {
      MAT_A a;
      MAT_B b;
      LOAD_A(a, a_base, la_clamp, k0);
      LOAD_B(b, b_off, lb, k0);
      acc = coopMatMulAdd(a, b, acc);
      k0 += BK;
    }
  }
  [[dont_unroll]] for (; k0 < k_end; k0 += BK) {  // the last steps: a partial one reads zeros past K
    MAT_A a;
    MAT_B b;
    LOAD_A(a, a_base, la_clamp, k0);
    LOAD_B(b, b_base, lb_clamp, k0);
    acc = coopMatMulAdd(a, b, acc);
  }
  store_result(acc, c_base, row0, col0, partial, false);
}

// The product of the tile at (row0, col0); main calls it from two sites (below).
void tile_product(const uint row0, const uint col0, const uint slices, const uint batch, const uint slice) {
  // k_split is a multiple of 256 (the host's rule): the mask changes nothing but shows k_begin % 8 == 0.
  const uint k_begin = (slice * p.k_split) & ~7u, k_end = min(p.K, k_begin + p.k_split);
  // Raw sums to the workspace wherever the host set a slice stride: a split, or a C the kernel cannot store
  // itself (bf16), one slice too (engine/src/plan/schedule.cpp add_split).
  const bool partial = p.split_stride != 0u;
  const uint a_base = p.a_offset + batch * p.stride_a;
  const uint b_base = p.b_offset + batch * p.stride_b;
  const uint c_base = partial ? p.c_offset + gl_WorkGroupID.z * p.split_stride : p.c_offset + batch * p.stride_c;

  tensorViewNV<2, false, 1, 0> tv = createTensorViewNV(2, false, 1, 0);  // (i, j) of the matrix: (j, i) stored
  tensorLayoutNV<2> la = createTensorLayoutNV(2);
  tensorLayoutNV<2> lb = createTensorLayoutNV(2);
  tensorLayoutNV<2, CLAMP> la_clamp = createTensorLayoutNV(2, CLAMP);
  tensorLayoutNV<2, CLAMP> lb_clamp = createTensorLayoutNV(2, CLAMP);
  // The clamped layouts end K at this slice's end: a partial last step reads zeros, not the next slice's terms.
  SET_A(la_clamp, k_end, p.lda);
  SET_B(lb_clamp, k_end, p.ldb);

  const bool inside = row0 + BM <= p.M && col0 + BN <= p.N;
  const bool aligned = a_base % ALIGN == 0 && b_base % ALIGN == 0 && p.lda % ALIGN == 0 && p.ldb % ALIGN == 0;
  if (inside && aligned && k_begin % 256 == 0) {
    SET_A(la, p.K, p.lda & ~(ALIGN - 1));
    SET_B(lb, p.K, p.ldb & ~(ALIGN - 1));
    const uint a_off = a_base & ~(ALIGN - 1), b_off = b_base & ~(ALIGN - 1);
    uint k0 = k_begin & ~255u;
    MAT_ACC acc = MAT_ACC(ACC_T(0));
    if (PREFETCH != 0 && k0 + BK <= k_end) {
      MAT_A a;
      MAT_B b;
      LOAD_A(a, a_off, la, k0);
      LOAD_B(b, b_off, lb, k0);
      for (k0 += BK; k0 + BK <= k_end; k0 += BK) {
        MAT_A a_next;
        MAT_B b_next;
        LOAD_A(a_next, a_off, la, k0);
        LOAD_B(b_next, b_off, lb, k0);
        acc = coopMatMulAdd(a, b, acc);
        a = a_next;
        b = b_next;
      }
      acc = coopMatMulAdd(a, b, acc);
    }
    for (uint i = (k_end - k0) / (BK * UNROLL); i > 0; --i) {
      [[unroll]] for (uint j = 0; j < UNROLL; ++j) {
        MAT_A a;
        MAT_B b;
        LOAD_A(a, a_off, la, k0);
        LOAD_B(b, b_off, lb, k0);
        acc = coopMatMulAdd(a, b, acc);
        k0 += BK;
      }
    }
    for (; k0 + BK <= k_end; k0 += BK) {
      MAT_A a;
      MAT_B b;
      LOAD_A(a, a_off, la, k0);
      LOAD_B(b, b_off, lb, k0);
      acc = coopMatMulAdd(a, b, acc);
    }
    if (k0 < k_end) {  // the partial last step: zeros past K
      MAT_A a;
      MAT_B b;
      LOAD_A(a, a_base, la_clamp, k0);
      LOAD_B(b, b_base, lb_clamp, k0);
      acc = coopMatMulAdd(a, b, acc);
    }
    store_result(acc, c_base, row0, col0, partial, inside);
    return;
  }

  if (BM <= 16 && row0 + BM > p.M && col0 + BN <= p.N && b_base % ALIGN == 0 && p.ldb % ALIGN == 0) {
    short_rows_product(row0, col0, a_base, b_base, c_base, k_begin, k_end, partial);
    return;
  }
  // The general path: plain layouts for whole steps of tiles inside the matrices, clamped ones (zeros
  // outside the matrices) for edge tiles and the partial last step.
  MAT_ACC acc = MAT_ACC(ACC_T(0));
  uint k0 = k_begin;
  if (inside) {
    SET_A(la, p.K, p.lda);
    SET_B(lb, p.K, p.ldb);
    [[dont_unroll]] for (; k0 + BK <= k_end; k0 += BK) {
      MAT_A a;
      MAT_B b;
      LOAD_A(a, a_base, la, k0);
      LOAD_B(b, b_base, lb, k0);
      acc = coopMatMulAdd(a, b, acc);
    }
  }
  [[dont_unroll]] for (; k0 < k_end; k0 += BK) {
    MAT_A a;
    MAT_B b;
    LOAD_A(a, a_base, la_clamp, k0);
    LOAD_B(b, b_base, lb_clamp, k0);
    acc = coopMatMulAdd(a, b, acc);
  }
  store_result(acc, c_base, row0, col0, partial, inside);
}

// A tile that lies inside C where the grid puts it is computed at row0 = block.y * BM as the compiler can see
// it: through tile_start's select alone the compiler loses that row0 is a multiple of the tile, and large
// products run a few percent slower (docs/design/coopmat2.md). The driver compiles the fast path twice.
void main() {
  const uvec2 block = grouped_workgroup(GROUP_M);
  const uint slices = p.K == 0 ? 1 : (p.K + p.k_split - 1) / p.k_split;
  const uint batch = gl_WorkGroupID.z / slices, slice = gl_WorkGroupID.z % slices;
  if (block.y * BM + BM <= p.M && block.x * BN + BN <= p.N) {
    tile_product(block.y * BM, block.x * BN, slices, batch, slice);
  } else {
    const bool shift = p.split_stride != 0u || (p.flags & GEMM_BETA_ZERO) != 0u;
    tile_product(tile_start(block.y, BM, p.M, shift), tile_start(block.x, BN, p.N, shift), slices, batch, slice);
  }
}
