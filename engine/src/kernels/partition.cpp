#include "kernels/partition.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "vkgemm/error.hpp"

namespace vkgemm::detail {
namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Cuts at whole blocks where the size allows, so that pieces keep the kernels' full tiles and the
// vec4 alignment of their offsets.
uint32_t round_down(uint64_t v, uint32_t granule) {
  if (granule > 1 && v >= granule) v -= v % granule;
  return static_cast<uint32_t>(std::max<uint64_t>(v, 1));
}

// Elements a batch range of one operand spans: `bc` entries `stride` apart, each `outer` stored rows
// `ld` apart of `inner` elements (rows and columns of the matrix as stored).
uint64_t span(uint64_t bc, uint64_t stride, uint64_t outer, uint64_t ld, uint64_t inner) {
  return (bc - 1) * stride + (outer - 1) * ld + inner;
}

// The sizes of the largest piece (the last along each axis may be shorter).
struct Sizes {
  uint32_t bc, mc, nc, kc;
};

// One operand's stored shape in terms of the piece's sizes: which piece size is its outer (stored-row)
// extent and which its inner one.
struct Shape {
  uint32_t* outer;
  uint32_t* inner;
  uint32_t outer_granule, inner_granule;
  uint64_t ld, stride;
};

std::array<Shape, 3> shapes(const WholeProduct& w, const Blocking& bl, Sizes& s) {
  const uint32_t km = std::max(bl.k_step, 1u);
  return {{
      w.trans_a ? Shape{&s.kc, &s.mc, km, bl.rows, w.lda, w.stride_a} : Shape{&s.mc, &s.kc, bl.rows, km, w.lda, w.stride_a},
      w.trans_b ? Shape{&s.nc, &s.kc, bl.cols, km, w.ldb, w.stride_b} : Shape{&s.kc, &s.nc, km, bl.cols, w.ldb, w.stride_b},
      Shape{&s.mc, &s.nc, bl.rows, bl.cols, w.ldc, w.stride_c},
  }};
}

// The largest piece within the grid, the watchdog bound and `fit` elements per binding.
// ws_fit: the workspace's elements one binding holds.
Sizes choose_sizes(const WholeProduct& w, const Blocking& bl, const PartitionLimits& lim, uint64_t fit,
                   uint64_t ws_fit) {
  Sizes s{w.batch, w.m, w.n, w.k};
  // Grid: each axis's workgroups cover at most max_groups blocks, in the main pass and the reduce pass.
  const auto cap = [](uint32_t& size, uint64_t groups, uint32_t block) {
    if (block) size = static_cast<uint32_t>(std::min<uint64_t>(size, groups * block));
  };
  cap(s.nc, lim.max_groups[0], bl.cols), cap(s.nc, lim.max_groups[0], bl.reduce_cols);
  cap(s.mc, lim.max_groups[1], bl.rows), cap(s.mc, lim.max_groups[1], bl.reduce_rows);
  s.bc = static_cast<uint32_t>(std::min<uint64_t>(s.bc, std::max<uint64_t>(1, lim.max_groups[2] / bl.z_per_entry)));
  if (lim.max_k && s.kc > lim.max_k) s.kc = std::max(1u, round_down(lim.max_k, std::max(bl.k_step, 1u)));
  if (lim.max_k && s.kc > lim.max_k) s.kc = lim.max_k;  // a bound below one K step

  auto ops = shapes(w, bl, s);
  const size_t first = w.k == 0 ? 2 : 0;  // with k = 0 only C is bound
  // Batch first: whole entries per piece while every operand's batch range fits.
  for (size_t i = first; i < 3; ++i) {
    const Shape& o = ops[i];
    const uint64_t one = span(1, 0, *o.outer, o.ld, *o.inner);
    if (one > fit) {
      s.bc = 1;
    } else if (o.stride) {
      s.bc = static_cast<uint32_t>(std::min<uint64_t>(s.bc, 1 + (fit - one) / o.stride));
    }
  }
  // Then each operand that one entry still overflows: fewer stored rows, or fewer elements of one row.
  for (size_t i = first; i < 3; ++i) {
    const Shape& o = ops[i];
    if (span(1, 0, *o.outer, o.ld, *o.inner) <= fit) continue;
    if (*o.inner <= fit) {
      *o.outer = std::min(*o.outer, round_down(1 + (fit - *o.inner) / o.ld, o.outer_granule));
    } else {
      *o.outer = 1;
      *o.inner = round_down(fit, o.inner_granule);
    }
  }
  // The split-K workspace holds z_per_entry m x n slices per batch entry; where the main pass adds them, its
  // counters too (one word a workgroup, at most one a sum: counted as one more slice).
  if (bl.reduce_rows || bl.adds_slices) {
    const uint64_t z = bl.z_per_entry + (bl.adds_slices ? 1 : 0);
    const auto ws = [&] { return uint64_t{s.mc} * s.nc * z * s.bc; };
    if (ws() > ws_fit) s.bc = static_cast<uint32_t>(std::max<uint64_t>(1, ws_fit / (uint64_t{s.mc} * s.nc * z)));
    if (ws() > ws_fit) s.mc = static_cast<uint32_t>(std::max<uint64_t>(1, ws_fit / (uint64_t{s.nc} * z)));
    if (ws() > ws_fit) s.nc = static_cast<uint32_t>(std::max<uint64_t>(1, ws_fit / z));
  }
  return s;
}

PieceBinding bind(uint64_t start_bytes, uint64_t elements, uint64_t es, uint64_t alignment) {
  PieceBinding b;
  b.offset = start_bytes - start_bytes % alignment;
  b.element_offset = static_cast<uint32_t>((start_bytes - b.offset) / es);
  b.size = start_bytes - b.offset + elements * es;
  return b;
}

}  // namespace

std::vector<Piece> partition(const WholeProduct& w, const Blocking& bl, const PartitionLimits& lim) {
  // Sizes are chosen for the wider of the two element types (f16 A and B with f32 C: 4 bytes), so every
  // binding fits; each binding then spans its own operand's bytes.
  const uint64_t es_ab = w.element_size, es_c = w.c_element_size ? w.c_element_size : w.element_size;
  const uint64_t es = std::max(es_ab, es_c);
  const auto limits_text = [&] {
    return fmt::format("{}'s maxStorageBufferRange = {} bytes (minStorageBufferOffsetAlignment {}) and "
                       "maxComputeWorkGroupCount = ({}, {}, {})",
                       lim.device, lim.max_range, lim.offset_alignment, lim.max_groups[0], lim.max_groups[1],
                       lim.max_groups[2]);
  };
  // A binding starts at the aligned offset at or before its first element: up to alignment - es bytes
  // before it (elements are es-aligned, and both are powers of two).
  const uint64_t align = std::max<uint64_t>(lim.offset_alignment, 1);
  const uint64_t slack = align > es ? align - es : 0;
  if (es == 0 || lim.max_range < slack + es || bl.z_per_entry > lim.max_groups[2] ||
      std::min({lim.max_groups[0], lim.max_groups[1], lim.max_groups[2]}) == 0) {
    throw Error(ErrorCode::too_large, fmt::format("gemm: not one piece of a product of {}-byte elements fits {}", es,
                                                  limits_text()));
  }
  // Elements one binding holds from any start; at most 2^32 - 1, as the kernels index with 32-bit uints.
  const uint64_t fit = std::min<uint64_t>((lim.max_range - slack) / es, 0xffffffffu);
  std::vector<Piece> out;
  if (w.m == 0 || w.n == 0 || w.batch == 0) return out;
  // The workspace is bound from its start: no slack.
  const uint64_t ws_es = std::max<uint64_t>(es_c, bl.workspace_element_size);
  const uint64_t ws_fit = std::min<uint64_t>(lim.max_range / ws_es, 0xffffffffu);
  const Sizes s = choose_sizes(w, bl, lim, fit, ws_fit);
  const uint64_t k_chunks = w.k == 0 ? 1 : ceil_div(w.k, s.kc);
  const uint64_t count = ceil_div(w.batch, s.bc) * ceil_div(w.m, s.mc) * ceil_div(w.n, s.nc) * k_chunks;
  if (count > kMaxPieces) {
    throw Error(ErrorCode::too_large,
                fmt::format("gemm: a {}x{}x{} product with batch {} would take {} dispatches of at most {}x{}x{} "
                            "(batch {}) to fit {}; vkgemm records at most {}",
                            w.m, w.n, w.k, w.batch, count, s.mc, s.nc, s.kc, s.bc, limits_text(), kMaxPieces));
  }
  out.reserve(count);
  for (uint64_t b0 = 0; b0 < w.batch; b0 += s.bc) {
    for (uint64_t m0 = 0; m0 < w.m; m0 += s.mc) {
      for (uint64_t n0 = 0; n0 < w.n; n0 += s.nc) {
        for (uint64_t k0 = 0; k0 == 0 || k0 < w.k; k0 += std::max(s.kc, 1u)) {
          Piece p;
          p.b0 = static_cast<uint32_t>(b0), p.m0 = static_cast<uint32_t>(m0), p.n0 = static_cast<uint32_t>(n0);
          p.k0 = static_cast<uint32_t>(k0);
          p.batch = static_cast<uint32_t>(std::min<uint64_t>(s.bc, w.batch - b0));
          p.m = static_cast<uint32_t>(std::min<uint64_t>(s.mc, w.m - m0));
          p.n = static_cast<uint32_t>(std::min<uint64_t>(s.nc, w.n - n0));
          p.k = static_cast<uint32_t>(std::min<uint64_t>(s.kc, w.k - k0));
          p.first_k = k0 == 0;
          const uint64_t c_first = b0 * w.stride_c + m0 * w.ldc + n0;
          p.c = bind(w.c_start + c_first * es_c, span(p.batch, w.stride_c, p.m, w.ldc, p.n), es_c, align);
          if (w.k == 0) {  // C = beta C: one piece per C block, A and B not read
            p.a = p.b = p.c;
            out.push_back(p);
            break;
          }
          const uint64_t a_first = b0 * w.stride_a + (w.trans_a ? k0 * w.lda + m0 : m0 * w.lda + k0);
          const uint64_t a_span = w.trans_a ? span(p.batch, w.stride_a, p.k, w.lda, p.m)
                                            : span(p.batch, w.stride_a, p.m, w.lda, p.k);
          p.a = bind(w.a_start + a_first * es_ab, a_span, es_ab, align);
          const uint64_t b_first = b0 * w.stride_b + (w.trans_b ? n0 * w.ldb + k0 : k0 * w.ldb + n0);
          const uint64_t b_span = w.trans_b ? span(p.batch, w.stride_b, p.n, w.ldb, p.k)
                                            : span(p.batch, w.stride_b, p.k, w.ldb, p.n);
          p.b = bind(w.b_start + b_first * es_ab, b_span, es_ab, align);
          out.push_back(p);
        }
      }
    }
  }
  return out;
}

}  // namespace vkgemm::detail
