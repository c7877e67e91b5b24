// The CPU reference for the full BLAS call (layouts, op, ld, alpha/beta, strided batch) and its
// comparison; see reference.hpp for the bound and why it holds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "core/element_access.hpp"
#include "ozaki/bound.hpp"
#include "ozaki/moduli.hpp"
#include "reference/epilogue.hpp"
#include "core/indexer.hpp"
#include "reference/pick.hpp"
#include "reference/parallel.hpp"
#include "reference/tolerance.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/half.hpp"
#include "vkgemm/reference.hpp"

namespace vkgemm {
namespace {

using detail::indexer;
using detail::Indexer;
using detail::Pick;
using detail::load_element;
using detail::store_element;

// The float reference of the picked elements of C (pick.hpp), accumulated in double (long double for f64,
// as the plain reference), with what the bounds need beside it (tolerance.hpp).
template <typename A>
struct FloatCells {
  std::vector<uint64_t> cells;         // where each picked element lives in C's span
  std::vector<A> ref;                  // epilogue(alpha * s + beta * c0) (no epilogue: the sum alone)
  std::vector<double> pre;             // with an epilogue, its activation's argument: alpha s + beta c0 + bias
  std::vector<double> sum, c0;         // s = sum_p op(A)_ip op(B)_pj, and C0 there (0 when beta = 0)
  std::vector<detail::SumStats> stats;
  double norm_ab2 = 0.0, norm_c2 = 0.0;  // sum over entries of ||A_t||^2 ||B_t||^2; ||C0||^2 over the picked
};

// The picked rows of op(A) (row r of the pick at r * k + p) or columns of op(B) (column c at c * k + p),
// each along p, read from the caller's memory: each sum then reads both operands in order. Read through
// the Indexer in the sum's loop, op(B) went down its stored columns (and a transposed A across its stored
// rows): a 1536^3 check with alpha 1.5 took 6.9 s that way against 3.6 s gathered (medians of 3, 2-core
// host). The values and order are the same.
// Elements as doubles (float types) or as the uint32 of the int32 the shaders widen i8 and u8 to.
template <typename T>
std::vector<T> along_k(const GemmDesc& d, const void* x, char which, const Pick& pick) {
  const Indexer ix = indexer(d, which);
  const auto& lines = which == 'A' ? pick.rows : pick.cols;
  std::vector<T> out(uint64_t(which == 'A' ? pick.row_count() : pick.col_count()) * uint64_t(d.k));
  uint64_t at = 0;
  for (int64_t t = 0; t < d.batch; ++t)
    for (const int64_t l : lines[size_t(t)])
      for (int64_t p = 0; p < d.k; ++p) {
        const uint64_t i = which == 'A' ? ix(t, l, p) : ix(t, p, l);
        if constexpr (std::is_same_v<T, double>) out[at++] = load_element(d.type, x, i);
        else out[at++] = static_cast<T>(detail::load_int(d.type, x, i));
      }
  return out;
}

// x^2 where x counts in the inputs' norm (finite), else 0.
double finite_square(double x) { return detail::counts_in_norm(x) ? x * x : 0.0; }

// sum over entries of ||A_t||_F^2 ||B_t||_F^2, the finite elements of each.
double entry_norms(const GemmDesc& d, const void* a, const void* b) {
  const Indexer ia = indexer(d, 'A'), ib = indexer(d, 'B');
  double total = 0.0;
  for (int64_t t = 0; t < d.batch; ++t) {
    double na = 0.0, nb = 0.0;
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t p = 0; p < d.k; ++p) na += finite_square(load_element(d.type, a, ia(t, i, p)));
    for (int64_t p = 0; p < d.k; ++p)
      for (int64_t j = 0; j < d.n; ++j) nb += finite_square(load_element(d.type, b, ib(t, p, j)));
    total += na * nb;
  }
  return total;
}

// The sums of W neighbouring picked elements of a row (columns col_b, col_b + k, ...: op(B) gathered by
// columns), each over p in order, so each is what it would be alone; W independent chains where one would
// wait on its previous term.
template <typename A, int W>
void sum_columns(const double* row_a, const double* col_b, int64_t k, A* sum, detail::SumStats* st) {
  for (int64_t p = 0; p < k; ++p) {
    const A x = static_cast<A>(row_a[p]);
    for (int w = 0; w < W; ++w) {
      const A y = static_cast<A>(col_b[w * k + p]);
      sum[w] += x * y;
      st[w].add(static_cast<double>(x * y), static_cast<double>(sum[w]));
    }
  }
}

// The fused epilogue on element (i, j) whose sum is v, in long double (reference/epilogue.hpp); `pre`
// receives the activation's argument, for the bound.
template <typename A>
A with_epilogue(const GemmDesc& d, const void* bias, int64_t i, int64_t j, A v, double& pre) {
  const long double x = static_cast<long double>(v) + detail::bias_at(d, bias, i, j);
  pre = static_cast<double>(x);
  return static_cast<A>(detail::apply_activation(d.epilogue, x));
}

template <typename A>
void compute(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* bias, const Pick& pick,
             FloatCells<A>& r, std::optional<double> norm_ab2 = {}) {
  const Indexer ic = indexer(d, 'C');
  const DataType out_type = output_type(d);
  const bool reads_ab = d.alpha != 0.0 && d.k != 0;
  const std::vector<double> rows_a = reads_ab ? along_k<double>(d, a, 'A', pick) : std::vector<double>{};
  const std::vector<double> cols_b = reads_ab ? along_k<double>(d, b, 'B', pick) : std::vector<double>{};
  if (reads_ab) r.norm_ab2 = norm_ab2 ? *norm_ab2 : entry_norms(d, a, b);
  const Pick::Rows flat = pick.flat_rows();
  const uint64_t count = pick.element_count();
  r.cells.resize(count), r.ref.resize(count), r.sum.resize(count), r.c0.resize(count), r.stats.resize(count);
  const bool epilogue = d.epilogue.active();
  if (epilogue) r.pre.resize(count);
  const auto rows = static_cast<uint32_t>(flat.size());
  std::vector<double> row_c2(rows, 0.0);
  detail::parallel_rows(rows, count * uint64_t(std::max<int64_t>(d.k, 1)), [&](uint32_t begin, uint32_t end) {
    constexpr int kColumns = 4;
    for (uint32_t row = begin; row < end; ++row) {
      const auto [t, i, first_cell, first_col] = flat[row];
      const std::vector<int64_t>& cols = pick.cols[size_t(t)];
      const auto n = static_cast<int64_t>(cols.size());
      for (int64_t j0 = 0; j0 < n; j0 += kColumns) {
        const int width = static_cast<int>(std::min<int64_t>(kColumns, n - j0));
        A sum[kColumns] = {};
        detail::SumStats st[kColumns];
        if (reads_ab) {
          const double* row_a = &rows_a[uint64_t(row) * uint64_t(d.k)];
          const double* col_b = &cols_b[(first_col + uint64_t(j0)) * uint64_t(d.k)];
          if (width == kColumns) {
            sum_columns<A, kColumns>(row_a, col_b, d.k, sum, st);
          } else {
            for (int w = 0; w < width; ++w) sum_columns<A, 1>(row_a, col_b + w * d.k, d.k, sum + w, st + w);
          }
        }
        for (int w = 0; w < width; ++w) {
          const uint64_t at = ic(t, i, cols[size_t(j0 + w)]), e = first_cell + uint64_t(j0 + w);
          A v = static_cast<A>(d.alpha) * sum[w];
          const double c = d.beta != 0.0 ? load_element(out_type, c_in, at) : 0.0;
          if (d.beta != 0.0) {
            v += static_cast<A>(d.beta) * static_cast<A>(c);
            if (detail::counts_in_norm(c)) row_c2[row] += c * c;
          }
          if (epilogue) v = with_epilogue(d, bias, i, cols[size_t(j0 + w)], v, r.pre[e]);
          r.cells[e] = at, r.ref[e] = v, r.sum[e] = static_cast<double>(sum[w]), r.c0[e] = c, r.stats[e] = st[w];
        }
      }
    }
  });
  for (const double x : row_c2) r.norm_c2 += x;
}

// i32, i8 and u8 inputs (widened to int32 as the shaders do), C int32: the picked elements, rows of (t, i)
// spread over the cores, each sum wrapping modulo 2^32 as the GPU's does.
void compute_int(const GemmDesc& d, const void* a, const void* b, const int32_t* c0, const Pick& pick,
                 std::vector<uint64_t>& cells, std::vector<int32_t>& ref) {
  const Indexer ic = indexer(d, 'C');
  const bool reads_ab = d.alpha != 0.0 && d.k != 0;
  const auto alpha = static_cast<uint32_t>(static_cast<int32_t>(d.alpha));
  const auto beta = static_cast<uint32_t>(static_cast<int32_t>(d.beta));
  const std::vector<uint32_t> rows_a = reads_ab ? along_k<uint32_t>(d, a, 'A', pick) : std::vector<uint32_t>{};
  const std::vector<uint32_t> cols_b = reads_ab ? along_k<uint32_t>(d, b, 'B', pick) : std::vector<uint32_t>{};
  const Pick::Rows flat = pick.flat_rows();
  const uint64_t count = pick.element_count();
  cells.resize(count), ref.resize(count);
  const auto k = uint64_t(d.k);
  detail::parallel_rows(static_cast<uint32_t>(flat.size()), count * std::max<uint64_t>(k, 1), [&](uint32_t begin, uint32_t end) {
    for (uint32_t row = begin; row < end; ++row) {
      const auto [t, i, first_cell, first_col] = flat[row];
      const std::vector<int64_t>& cols = pick.cols[size_t(t)];
      for (size_t w = 0; w < cols.size(); ++w) {
        uint32_t sum = 0;
        if (reads_ab) {
          const uint32_t* x = &rows_a[uint64_t(row) * k];
          const uint32_t* y = &cols_b[(first_col + w) * k];
          for (uint64_t p = 0; p < k; ++p) sum += x[p] * y[p];
        }
        const uint64_t at = ic(t, i, cols[w]);
        uint32_t r = alpha * sum;
        if (d.beta != 0.0) r += beta * static_cast<uint32_t>(c0[at]);
        cells[first_cell + w] = at, ref[first_cell + w] = static_cast<int32_t>(r);
      }
    }
  });
}

Comparison compare_int(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                       const Pick& pick) {
  Comparison out;
  std::vector<uint64_t> cells;
  std::vector<int32_t> ref;
  compute_int(d, a, b, static_cast<const int32_t*>(c_in), pick, cells, ref);
  const auto* got = static_cast<const int32_t*>(c_gpu);
  for (size_t i = 0; i < cells.size(); ++i) {
    if (got[cells[i]] != ref[i]) {
      if (out.bad_elements == 0 || cells[i] < out.first_bad) out.first_bad = cells[i];
      ++out.bad_elements;
    }
  }
  out.worst_element_ratio = out.bad_elements ? std::numeric_limits<double>::infinity() : 0.0;
  return out;
}

// A dequantizing int8 product (i8 or u8 into f32 or f16 C: dequantizes(d)) on the picked elements: the exact
// sums s (compute_int's, as the shaders' 32-bit integers: the door keeps K where they cannot wrap), then in
// long double y = act(alpha * tensor_scale * scale[j] * s + beta * c0 + bias); `pre` the activation's
// argument and `terms` the magnitudes its rounding is counted on, |scaled product| + |beta c0| + |bias|.
struct DequantCells {
  std::vector<uint64_t> cells;
  std::vector<long double> ref;
  std::vector<double> pre, terms;
  std::vector<double> scale;  // |alpha tensor_scale scale[j]|, for the chunked bound
};

DequantCells compute_dequant(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* vectors,
                             const Pick& pick) {
  GemmDesc sums = d;
  sums.alpha = 1.0, sums.beta = 0.0;
  DequantCells r;
  std::vector<int32_t> s;
  compute_int(sums, a, b, nullptr, pick, r.cells, s);
  const DataType out_type = output_type(d);
  const Epilogue& e = d.epilogue;
  const auto* scales = static_cast<const float*>(vectors);
  const auto* bias = vectors ? static_cast<const unsigned char*>(vectors) + bias_byte_offset(d) : nullptr;
  r.ref.resize(s.size()), r.pre.resize(s.size()), r.terms.resize(s.size()), r.scale.resize(s.size());
  for (const auto& [t, i, first_cell, first_col] : pick.flat_rows()) {
    const std::vector<int64_t>& cols = pick.cols[size_t(t)];
    for (size_t w = 0; w < cols.size(); ++w) {
      const uint64_t at = first_cell + w;
      const int64_t j = cols[w];
      long double scale = static_cast<long double>(d.alpha);
      if (e.scale != ScaleAxis::none) scale *= static_cast<long double>(e.tensor_scale);
      if (e.scale == ScaleAxis::per_column) scale *= static_cast<long double>(scales[j]);
      const long double product = scale * static_cast<long double>(s[at]);
      const long double c0 = d.beta != 0.0 ? static_cast<long double>(d.beta) * load_element(out_type, c_in, r.cells[at]) : 0.0L;
      const long double add = detail::bias_at(d, bias, i, j);
      const long double x = product + c0 + add;
      r.pre[at] = static_cast<double>(x);
      r.terms[at] = static_cast<double>(std::fabs(product) + std::fabs(c0) + std::fabs(add));
      r.scale[at] = static_cast<double>(std::fabs(scale));
      r.ref[at] = e.activation == Activation::none ? x : detail::apply_activation(e, x);
    }
  }
  return r;
}

// A dequantized element's allowance, with u = 2^-24 (the shaders' fp32): the sum's conversion to fp32, its
// multiplications by its column's scale and by alpha (tensor_scale folded in, itself rounded), beta C's
// product and the two additions: 6u of the terms' magnitudes; scaled by the activation's slope, plus its own
// error and the rounding to C (with f16's subnormal spacing as an absolute floor).
// Cut into k_chunks along K, each chunk adds 4u (its conversion, two scalings, its addition into C) and the
// rounding of its partial result stored in C, of a magnitude bounding every partial sum: |scale| k max|a||b|.
double dequant_allowance(const GemmDesc& d, const CompareOptions& options, double pre, double terms, double scale,
                         double y) {
  const double u = std::ldexp(1.0, -24);
  const DataType out_type = output_type(d);
  const double u_out = out_type == DataType::f16 ? std::ldexp(1.0, -11) : 0.0;
  const double floor = out_type == DataType::f16 ? std::ldexp(1.0, -25) : std::ldexp(1.0, -126);
  const double largest_term = d.type == DataType::u8 ? 255.0 * 255.0 : 128.0 * 128.0;
  // Each chunk's partial result is stored in C between chunks: rounded to C's type too (f16: 2^-11).
  const double u_store = out_type == DataType::f16 ? std::ldexp(1.0, -11) : u;
  const double chunks =
      options.k_chunks > 1 ? options.k_chunks * (4.0 * u + u_store) * scale * double(d.k) * largest_term : 0.0;
  return detail::activation_slope_bound(d.epilogue) * (6.0 * u * terms + chunks) +
         detail::activation_error(d.epilogue, u, pre) + u_out * std::fabs(y) + floor;
}

Comparison compare_dequant(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                           const CompareOptions& options, const Pick& pick, const void* vectors) {
  const DataType out_type = output_type(d);
  const DequantCells r = compute_dequant(d, a, b, c_in, vectors, pick);
  Comparison out;
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const double g = load_element(out_type, c_gpu, r.cells[i]);
    const auto ref = static_cast<double>(r.ref[i]);
    double ratio = 0.0;
    if (const auto nf = detail::judge_non_finite(out_type, ref, g); nf != detail::NonFinite::finite) {
      ratio = nf == detail::NonFinite::differs ? std::numeric_limits<double>::infinity() : 0.0;
    } else if (!std::isfinite(g)) {
      ratio = std::numeric_limits<double>::infinity();
    } else {
      ratio = std::fabs(g - ref) / dequant_allowance(d, options, r.pre[i], r.terms[i], r.scale[i], ref);
    }
    if (ratio > 1.0) {
      if (out.bad_elements == 0 || r.cells[i] < out.first_bad) out.first_bad = r.cells[i];
      ++out.bad_elements;
    }
    out.worst_element_ratio = std::max(out.worst_element_ratio, ratio);
  }
  return out;
}

// An element's allowance with the epilogue (reference/epilogue.hpp): `product` is the product's own for x,
// scaled by the activation's slope, plus the bias's addition, the activation's own rounding and C's.
double epilogue_allowance(const GemmDesc& d, const detail::Tolerance& t, double product, double x, double y) {
  return detail::activation_slope_bound(d.epilogue) * (product + t.u_sums() * std::fabs(x)) +
         detail::activation_error(d.epilogue, t.u_sums(), x) + t.u_output() * std::fabs(y);
}

// The emulation's allowance of each picked element, in the order FloatCells holds them (pick.hpp's rows,
// each across its entry's picked columns).
template <typename A>
std::vector<double> emulation_allowances(const ozaki::EmulationBound& bound, const Pick& pick, const FloatCells<A>& r) {
  std::vector<double> out(r.cells.size());
  for (const Pick::Row& row : pick.flat_rows()) {
    const std::vector<int64_t>& cols = pick.cols[size_t(row.t)];
    for (size_t w = 0; w < cols.size(); ++w) {
      const uint64_t e = row.first_cell + w;
      out[e] = bound.allowed(row.t, row.i, cols[w], r.stats[e].abs_sum, r.c0[e], static_cast<double>(r.ref[e]));
    }
  }
  return out;
}

template <typename A>
Comparison compare_float(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                         const CompareOptions& options, const Pick& pick, std::optional<double> norm_ab2,
                         const void* bias, const ozaki::EmulationBound* emulation) {
  const DataType out_type = output_type(d);
  Comparison out;
  FloatCells<A> r;
  compute(d, a, b, c_in, bias, pick, r, norm_ab2);
  const bool epilogue = d.epilogue.active();
  double epilogue_slack2 = 0.0;  // the epilogue's own terms, summed in square over the elements
  // With the emulation's bound: its allowances, no model, and the normwise test theirs (implied by them).
  CompareOptions rule = options;
  if (emulation) rule.random_inputs = false;
  const detail::Tolerance tolerance(d.type, out_type, static_cast<uint64_t>(d.k), 2, rule, d.alpha, d.beta);
  const std::vector<double> emulated = emulation ? emulation_allowances(*emulation, pick, r) : std::vector<double>{};
  double emulated2 = 0.0;
  out.bound = tolerance.gamma();
  detail::ModelSums model;
  double diff2 = 0.0;
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const double g = load_element(out_type, c_gpu, r.cells[i]);
    const auto ref = static_cast<double>(r.ref[i]);
    if (const auto nf = detail::judge_non_finite(out_type, ref, g); nf != detail::NonFinite::finite) {
      if (nf == detail::NonFinite::differs) {  // judged by its class alone, outside the normwise error
        if (out.bad_elements == 0 || r.cells[i] < out.first_bad) out.first_bad = r.cells[i];
        ++out.bad_elements;
        out.worst_element_ratio = std::numeric_limits<double>::infinity();
      }
      continue;
    }
    const double diff = std::fabs(g - ref);
    const detail::ElementTerms terms{d.alpha, d.beta, r.c0[i], r.sum[i], epilogue ? r.pre[i] : ref};
    tolerance.accumulate(model, r.stats[i], terms);
    if (epilogue) {
      const double own = epilogue_allowance(d, tolerance, 0.0, r.pre[i], ref);
      epilogue_slack2 += own * own;
    }
    double ratio = 0.0;
    if (emulation) emulated2 += emulated[i] * emulated[i];
    if (!std::isfinite(g)) {
      ratio = std::numeric_limits<double>::infinity();
    } else if (diff > 0.0) {
      double allowed = emulation ? emulated[i] : tolerance.allowed(r.stats[i], terms);
      if (epilogue) allowed = epilogue_allowance(d, tolerance, allowed, r.pre[i], ref);
      ratio = allowed > 0.0 ? diff / allowed : std::numeric_limits<double>::infinity();
    }
    if (ratio > 1.0) {
      if (out.bad_elements == 0 || r.cells[i] < out.first_bad) out.first_bad = r.cells[i];
      ++out.bad_elements;
    }
    out.worst_element_ratio = std::max(out.worst_element_ratio, ratio);
    diff2 += std::isfinite(diff) ? diff * diff : std::numeric_limits<double>::infinity();
  }
  // Over the picked elements alone both sides shrink together: |C - C_ref| <= gamma (|alpha| |A||B| +
  // |beta| |C0|) element by element gives ||(C - C_ref)_picked|| <= gamma (|alpha| ||A|| ||B|| + |beta|
  // ||C0_picked||), so the test holds for a subset as it does for the whole.
  // With an epilogue, the activation's slope scales the bound and its own terms join the slack.
  const double slack = tolerance.absolute() * std::sqrt(static_cast<double>(r.cells.size())) + std::sqrt(epilogue_slack2);
  if (epilogue) out.bound *= detail::activation_slope_bound(d.epilogue);
  const double norm = std::max(0.0, std::sqrt(diff2) - slack);
  const double norm_scale = std::fabs(d.alpha) * std::sqrt(r.norm_ab2) + std::fabs(d.beta) * std::sqrt(r.norm_c2);
  out.normwise_error = norm_scale > 0.0 ? norm / norm_scale : norm;
  out.normwise_model_ratio = tolerance.normwise_model_ratio(model, std::sqrt(diff2));
  if (emulation) {  // ||C - C_ref|| <= ||allowances|| follows from the elements': the normwise test, theirs
    out.emulation_moduli = emulation->moduli();
    out.normwise_error = norm_scale > 0.0 ? std::sqrt(diff2) / norm_scale : std::sqrt(diff2);
    out.bound = norm_scale > 0.0 ? std::sqrt(emulated2) / norm_scale : std::sqrt(emulated2);
    if (epilogue) out.bound *= detail::activation_slope_bound(d.epilogue);
    if (std::isnan(out.bound)) out.bound = std::numeric_limits<double>::infinity();  // inf / inf: the elements judge
  }
  return out;
}

}  // namespace

namespace detail {

Comparison judge_picked(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                        const CompareOptions& options, const Pick& pick, std::optional<double> norm_ab2,
                        const void* bias, const ozaki::EmulationBound* emulation) {
  if (dequantizes(d)) return compare_dequant(d, a, b, c_in, c_gpu, options, pick, bias);
  if (is_integer(d.type)) return compare_int(d, a, b, c_in, c_gpu, pick);
  return d.type == DataType::f64
             ? compare_float<long double>(d, a, b, c_in, c_gpu, options, pick, norm_ab2, bias, emulation)
             : compare_float<double>(d, a, b, c_in, c_gpu, options, pick, norm_ab2, bias, emulation);
}

std::optional<ozaki::EmulationBound> emulation_bound(const GemmDesc& d, const void* a, const void* b,
                                                     const CompareOptions& options) {
  if (options.emulation_moduli == 0) return std::nullopt;
  if (d.type != DataType::f32 && d.type != DataType::f64) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("CompareOptions::emulation_moduli is for f32 and f64 products (the ozaki kernel's), "
                            "not {}", to_string(d.type)));
  }
  std::optional<ozaki::EmulationBound> bound(std::in_place, d, a, b, options.emulation_moduli);
  if (!bound->covered()) bound.reset();  // the device ran the native kernel: its bound judges
  return bound;
}

void judge_gaps(const GemmDesc& d, const void* c_in, const void* c_gpu, Comparison& out) {
  // Gaps between rows and between batch entries: untouched, bit for bit. Element idx of C's span lies in
  // entry idx / stride, stored line (idx % stride) / ld, place (idx % stride) % ld; it is described when
  // all three are inside the matrix.
  const OperandExtent e = operand_extent(d, 'C');
  const uint64_t es = element_size(output_type(d));
  const auto* got = static_cast<const unsigned char*>(c_gpu);
  const auto* before = static_cast<const unsigned char*>(c_in);
  const auto ld = uint64_t(std::max<int64_t>(e.ld, 1)), stride = uint64_t(std::max<int64_t>(e.stride, 1));
  const auto judge = [&](uint64_t begin, uint64_t end) {  // [begin, end) of the span: a gap
    for (uint64_t i = begin; i < std::min(end, e.elements); ++i) {
      if (std::memcmp(got + i * es, before + i * es, es) != 0) {
        if (out.bad_elements == 0 || i < out.first_bad) out.first_bad = i;
        ++out.bad_elements;
      }
    }
  };
  // Within each entry, past each stored line's inner elements up to ld; after its last line, up to the next
  // entry. A tight C has none, and costs nothing here.
  for (uint64_t t = 0; t < uint64_t(d.batch); ++t) {
    const uint64_t first = t * stride;
    if (ld > uint64_t(e.inner))
      for (uint64_t line = 0; line < uint64_t(e.outer); ++line) judge(first + line * ld + uint64_t(e.inner), first + (line + 1) * ld);
    if (t + 1 < uint64_t(d.batch)) judge(first + uint64_t(e.outer) * ld, first + stride);
  }
}

void decide(const GemmDesc& d, Comparison& out) {
  out.passed = out.bad_elements == 0 && (!out.sampled || out.sampled->bad_rows == 0) &&
               (is_integer(d.type) || (out.normwise_error <= out.bound && out.normwise_model_ratio <= 1.0));
}

}  // namespace detail

namespace {

// Whether an operand is stored tightly (ld = its stored rows' length: no gaps).
bool tight(const GemmDesc& d, char which) {
  const OperandExtent e = operand_extent(d, which);
  return e.ld == std::max<int64_t>(1, e.inner);
}

// Element (i, j) of op(X) (or of C) for i < rows, j < cols, copied into row-major order, bytes as they are:
// a call that differs from the plain product only in its layout and ops, rearranged into that product.
std::vector<std::byte> row_major(const GemmDesc& d, const void* x, char which, int64_t rows, int64_t cols) {
  const size_t es = element_size(which == 'C' ? output_type(d) : d.type);
  const Indexer ix = indexer(d, which);
  std::vector<std::byte> out(uint64_t(rows) * uint64_t(cols) * es);
  const auto* in = static_cast<const std::byte*>(x);
  std::byte* to = out.data();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j, to += es) std::memcpy(to, in + ix(0, i, j) * es, es);
  return out;
}

}  // namespace

void reference_gemm(const GemmDesc& desc, const void* a, const void* b, const void* c_in, void* c_out,
                    const void* bias) {
  check_gemm(desc);
  const DataType out_type = output_type(desc);
  const uint64_t span = operand_extent(desc, 'C').elements;
  if (span) std::memcpy(c_out, c_in, span * element_size(out_type));
  const Pick all = Pick::every(desc);
  if (dequantizes(desc)) {
    const DequantCells r = compute_dequant(desc, a, b, c_in, bias, all);
    for (size_t i = 0; i < r.cells.size(); ++i) store_element(out_type, c_out, r.cells[i], static_cast<double>(r.ref[i]));
    return;
  }
  if (is_integer(desc.type)) {
    std::vector<uint64_t> cells;
    std::vector<int32_t> ref;
    compute_int(desc, a, b, static_cast<const int32_t*>(c_in), all, cells, ref);
    for (size_t i = 0; i < cells.size(); ++i) static_cast<int32_t*>(c_out)[cells[i]] = ref[i];
    return;
  }
  const auto store = [&](const auto& r) {
    for (size_t i = 0; i < r.cells.size(); ++i) store_element(out_type, c_out, r.cells[i], r.ref[i]);
  };
  if (desc.type == DataType::f64) {
    FloatCells<long double> r;
    compute(desc, a, b, c_in, bias, all, r);
    store(r);
  } else {
    FloatCells<double> r;
    compute(desc, a, b, c_in, bias, all, r);
    store(r);
  }
}

uint32_t emulation_moduli_to_judge(const GemmDesc& desc, const GemmOptions& options, Kernel ran) noexcept {
  const uint32_t asked = options.emulation_moduli;
  if (ran != Kernel::ozaki || asked == 0 || (desc.type != DataType::f32 && desc.type != DataType::f64)) return 0;
  return asked == ozaki::default_moduli(desc.type, uint64_t(std::max<int64_t>(desc.k, 0))) ? 0 : asked;
}

Comparison compare_with_reference(const GemmDesc& desc, const void* a, const void* b, const void* c_in,
                                  const void* c_gpu, const CompareOptions& options, const void* bias) {
  check_gemm(desc);
  const DataType out_type = output_type(desc);
  // A product with alpha 1, beta 0, one entry and tight strides is the common case of big checks: the
  // blocked, multi-threaded ReferenceProduct judges it the same way, faster. Another layout or op
  // combination goes to it too, its operands and C copied into the row-major plain product's order first:
  // a 1536^3 TT check took 2.5 s that way against 4.1 s on the general path (6.0 before its operands were
  // gathered; medians of 3 on a 2-core host).
  const std::optional<ozaki::EmulationBound> emulation = detail::emulation_bound(desc, a, b, options);
  const bool plain = !emulation && !desc.epilogue.active() && !dequantizes(desc) && desc.batch == 1 && desc.alpha == 1.0 && desc.beta == 0.0 && desc.m > 0 && desc.n > 0 &&
                     tight(desc, 'A') && tight(desc, 'B') && tight(desc, 'C');
  if (plain) {
    const auto m = static_cast<uint32_t>(desc.m), n = static_cast<uint32_t>(desc.n), k = static_cast<uint32_t>(desc.k);
    if (desc.layout == Layout::row_major && desc.op_a == Op::n && desc.op_b == Op::n) {
      return ReferenceProduct(desc.type, out_type, m, n, k, a, b, options).compare(c_gpu);
    }
    const auto op_a = row_major(desc, a, 'A', desc.m, desc.k), op_b = row_major(desc, b, 'B', desc.k, desc.n);
    const auto c = row_major(desc, c_gpu, 'C', desc.m, desc.n);
    Comparison out = ReferenceProduct(desc.type, out_type, m, n, k, op_a.data(), op_b.data(), options).compare(c.data());
    if (out.bad_elements > 0) {  // where the first bad element lives in the caller's C, not in the copy
      const auto i = static_cast<int64_t>(out.first_bad / uint64_t(desc.n));
      const auto j = static_cast<int64_t>(out.first_bad % uint64_t(desc.n));
      out.first_bad = indexer(desc, 'C')(0, i, j);
    }
    return out;
  }
  Comparison out = detail::judge_picked(desc, a, b, c_in, c_gpu, options, Pick::every(desc), {}, bias,
                                       emulation ? &*emulation : nullptr);
  detail::judge_gaps(desc, c_in, c_gpu, out);
  detail::decide(desc, out);
  return out;
}

}  // namespace vkgemm
