// The CPU reference for the full BLAS call (layouts, op, ld, alpha/beta, strided batch) and its
// comparison; see reference.hpp for the bound and why it holds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "element_access.hpp"
#include "reference/parallel.hpp"
#include "reference/tolerance.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/half.hpp"
#include "vkgemm/reference.hpp"

namespace vkgemm {
namespace {

// Where element (i, j) of op(X) (or of C) lives, for batch entry `batch`.
struct Indexer {
  OperandExtent e;
  bool row_major = true;
  bool transposed = false;
  uint64_t operator()(int64_t batch, int64_t i, int64_t j) const {
    const int64_t r = transposed ? j : i, c = transposed ? i : j;  // (r, c) of the matrix as stored
    const int64_t outer = row_major ? r : c, inner = row_major ? c : r;
    return uint64_t(batch * e.stride + outer * e.ld + inner);
  }
};

Indexer indexer(const GemmDesc& d, char which) {
  Indexer x;
  x.e = operand_extent(d, which);
  x.row_major = d.layout == Layout::row_major;
  x.transposed = (which == 'A' && d.op_a == Op::t) || (which == 'B' && d.op_b == Op::t);
  return x;
}

using detail::load_element;
using detail::store_element;

std::vector<double> widen(DataType type, const void* p, uint64_t count) {
  std::vector<double> out(p ? count : 0);
  for (uint64_t i = 0; i < out.size(); ++i) out[i] = load_element(type, p, i);
  return out;
}

// The float reference of every described element of C, from widened operands: ref accumulated in double
// (long double for f64, as the plain reference), with what the bounds need beside it (tolerance.hpp).
template <typename A>
struct FloatCells {
  std::vector<uint64_t> cells;         // where each described element lives in C's span
  std::vector<A> ref;                  // alpha * s + beta * c0
  std::vector<double> sum, c0;         // s = sum_p op(A)_ip op(B)_pj, and C0 there (0 when beta = 0)
  std::vector<detail::SumStats> stats;
  double norm_ab2 = 0.0, norm_c2 = 0.0;
};

// op(A) by rows (element (t, i, p) at (t * m + i) * k + p) or op(B) by columns ((t, p, j) at (t * n + j) * k + p):
// each sum then reads both operands along p, in order. Read through the Indexer in the sum's loop, op(B)
// went down its stored columns (and a transposed A across its stored rows): a 1536^3 check with alpha 1.5
// took 6.9 s that way against 3.6 s gathered (medians of 3, 2-core host). The values and order are the same.
std::vector<double> along_k(const GemmDesc& d, const double* x, char which) {
  const Indexer ix = indexer(d, which);
  const int64_t lines = which == 'A' ? d.m : d.n;
  std::vector<double> out(uint64_t(d.batch) * uint64_t(lines) * uint64_t(d.k));
  uint64_t at = 0;
  for (int64_t t = 0; t < d.batch; ++t)
    for (int64_t l = 0; l < lines; ++l)
      for (int64_t p = 0; p < d.k; ++p) out[at++] = x[which == 'A' ? ix(t, l, p) : ix(t, p, l)];
  return out;
}

// x^2 where x counts in the inputs' norm (finite), else 0.
double finite_square(double x) { return detail::counts_in_norm(x) ? x * x : 0.0; }

// The sums of W neighbouring elements of a row (columns col_b, col_b + k, ...: op(B) gathered by columns),
// each over p in order, so each is what it would be alone; W independent chains where one would wait on its
// previous term.
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

template <typename A>
void compute(const GemmDesc& d, const double* a, const double* b, const double* c0, FloatCells<A>& r) {
  const Indexer ia = indexer(d, 'A'), ib = indexer(d, 'B'), ic = indexer(d, 'C');
  const bool reads_ab = d.alpha != 0.0 && d.k != 0;
  const std::vector<double> rows_a = reads_ab ? along_k(d, a, 'A') : std::vector<double>{};
  const std::vector<double> cols_b = reads_ab ? along_k(d, b, 'B') : std::vector<double>{};
  for (int64_t t = 0; t < d.batch; ++t) {
    double na = 0.0, nb = 0.0;
    if (reads_ab) {
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t p = 0; p < d.k; ++p) na += finite_square(a[ia(t, i, p)]);
      for (int64_t p = 0; p < d.k; ++p)
        for (int64_t j = 0; j < d.n; ++j) nb += finite_square(b[ib(t, p, j)]);
    }
    r.norm_ab2 += na * nb;
  }
  // Element (t, i, j) at index (t * m + i) * n + j; rows of (t, i) spread over the cores.
  const uint64_t count = uint64_t(d.batch) * uint64_t(d.m) * uint64_t(d.n);
  r.cells.resize(count), r.ref.resize(count), r.sum.resize(count), r.c0.resize(count), r.stats.resize(count);
  const auto rows = static_cast<uint32_t>(d.batch * d.m);
  std::vector<double> row_c2(rows, 0.0);
  detail::parallel_rows(rows, count * uint64_t(std::max<int64_t>(d.k, 1)), [&](uint32_t begin, uint32_t end) {
    constexpr int kColumns = 4;
    for (uint32_t row = begin; row < end; ++row) {
      const int64_t t = row / d.m, i = row % d.m;
      for (int64_t j0 = 0; j0 < d.n; j0 += kColumns) {
        const int width = static_cast<int>(std::min<int64_t>(kColumns, d.n - j0));
        A sum[kColumns] = {};
        detail::SumStats st[kColumns];
        if (reads_ab) {
          const double* row_a = &rows_a[uint64_t(t * d.m + i) * uint64_t(d.k)];
          const double* col_b = &cols_b[uint64_t(t * d.n + j0) * uint64_t(d.k)];
          if (width == kColumns) {
            sum_columns<A, kColumns>(row_a, col_b, d.k, sum, st);
          } else {
            for (int w = 0; w < width; ++w) sum_columns<A, 1>(row_a, col_b + w * d.k, d.k, sum + w, st + w);
          }
        }
        for (int w = 0; w < width; ++w) {
          const int64_t j = j0 + w;
          const uint64_t at = ic(t, i, j), e = uint64_t(row) * uint64_t(d.n) + uint64_t(j);
          A v = static_cast<A>(d.alpha) * sum[w];
          const double c = d.beta != 0.0 ? c0[at] : 0.0;
          if (d.beta != 0.0) {
            v += static_cast<A>(d.beta) * static_cast<A>(c);
            if (detail::counts_in_norm(c)) row_c2[row] += c * c;
          }
          r.cells[e] = at, r.ref[e] = v, r.sum[e] = static_cast<double>(sum[w]), r.c0[e] = c, r.stats[e] = st[w];
        }
      }
    }
  });
  for (const double x : row_c2) r.norm_c2 += x;
}

// i32, i8 and u8 inputs (widened to int32 as the shaders do), C int32.
void compute_int(const GemmDesc& d, const void* a, const void* b, const int32_t* c0, std::vector<uint64_t>& cells,
                 std::vector<int32_t>& ref) {
  const Indexer ia = indexer(d, 'A'), ib = indexer(d, 'B'), ic = indexer(d, 'C');
  const bool reads_ab = d.alpha != 0.0 && d.k != 0;
  const auto alpha = static_cast<uint32_t>(static_cast<int32_t>(d.alpha));
  const auto beta = static_cast<uint32_t>(static_cast<int32_t>(d.beta));
  for (int64_t t = 0; t < d.batch; ++t)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        uint32_t sum = 0;  // wraps like the GPU
        if (reads_ab)
          for (int64_t p = 0; p < d.k; ++p)
            sum += static_cast<uint32_t>(detail::load_int(d.type, a, ia(t, i, p))) *
                   static_cast<uint32_t>(detail::load_int(d.type, b, ib(t, p, j)));
        const uint64_t at = ic(t, i, j);
        uint32_t r = alpha * sum;
        if (d.beta != 0.0) r += beta * static_cast<uint32_t>(c0[at]);
        cells.push_back(at);
        ref.push_back(static_cast<int32_t>(r));
      }
}

template <typename A>
FloatCells<A> float_reference(const GemmDesc& d, const void* a, const void* b, const void* c_in) {
  const bool reads_ab = d.alpha != 0.0 && d.k != 0;
  const auto wa = widen(d.type, reads_ab ? a : nullptr, operand_extent(d, 'A').elements);
  const auto wb = widen(d.type, reads_ab ? b : nullptr, operand_extent(d, 'B').elements);
  const auto wc = widen(output_type(d), d.beta != 0.0 ? c_in : nullptr, operand_extent(d, 'C').elements);
  FloatCells<A> r;
  compute(d, wa.data(), wb.data(), wc.data(), r);
  return r;
}

Comparison compare_int(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                       std::vector<char>& described) {
  Comparison out;
  std::vector<uint64_t> cells;
  std::vector<int32_t> ref;
  compute_int(d, a, b, static_cast<const int32_t*>(c_in), cells, ref);
  const auto* got = static_cast<const int32_t*>(c_gpu);
  for (size_t i = 0; i < cells.size(); ++i) {
    described[cells[i]] = 1;
    if (got[cells[i]] != ref[i]) {
      if (out.bad_elements == 0 || cells[i] < out.first_bad) out.first_bad = cells[i];
      ++out.bad_elements;
    }
  }
  out.worst_element_ratio = out.bad_elements ? std::numeric_limits<double>::infinity() : 0.0;
  return out;
}

template <typename A>
Comparison compare_float(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                         const CompareOptions& options, std::vector<char>& described) {
  const DataType out_type = output_type(d);
  Comparison out;
  const FloatCells<A> r = float_reference<A>(d, a, b, c_in);
  const detail::Tolerance tolerance(d.type, out_type, static_cast<uint64_t>(d.k), 2, options);
  out.bound = tolerance.gamma();
  detail::ModelSums model;
  double diff2 = 0.0;
  for (size_t i = 0; i < r.cells.size(); ++i) {
    described[r.cells[i]] = 1;
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
    const detail::ElementTerms terms{d.alpha, d.beta, r.c0[i], r.sum[i], ref};
    tolerance.accumulate(model, r.stats[i], terms);
    double ratio = 0.0;
    if (!std::isfinite(g)) {
      ratio = std::numeric_limits<double>::infinity();
    } else if (diff > 0.0) {
      const double allowed = tolerance.allowed(r.stats[i], terms);
      ratio = allowed > 0.0 ? diff / allowed : std::numeric_limits<double>::infinity();
    }
    if (ratio > 1.0) {
      if (out.bad_elements == 0 || r.cells[i] < out.first_bad) out.first_bad = r.cells[i];
      ++out.bad_elements;
    }
    out.worst_element_ratio = std::max(out.worst_element_ratio, ratio);
    diff2 += std::isfinite(diff) ? diff * diff : std::numeric_limits<double>::infinity();
  }
  const double slack = tolerance.absolute() * std::sqrt(static_cast<double>(r.cells.size()));
  const double norm = std::max(0.0, std::sqrt(diff2) - slack);
  const double norm_scale = std::fabs(d.alpha) * std::sqrt(r.norm_ab2) + std::fabs(d.beta) * std::sqrt(r.norm_c2);
  out.normwise_error = norm_scale > 0.0 ? norm / norm_scale : norm;
  out.normwise_model_ratio = tolerance.normwise_model_ratio(model, std::sqrt(diff2));
  return out;
}

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

void reference_gemm(const GemmDesc& desc, const void* a, const void* b, const void* c_in, void* c_out) {
  check_gemm(desc);
  const DataType out_type = output_type(desc);
  const uint64_t span = operand_extent(desc, 'C').elements;
  if (span) std::memcpy(c_out, c_in, span * element_size(out_type));
  if (is_integer(desc.type)) {
    std::vector<uint64_t> cells;
    std::vector<int32_t> ref;
    compute_int(desc, a, b, static_cast<const int32_t*>(c_in), cells, ref);
    for (size_t i = 0; i < cells.size(); ++i) static_cast<int32_t*>(c_out)[cells[i]] = ref[i];
    return;
  }
  if (desc.type == DataType::f64) {
    const auto r = float_reference<long double>(desc, a, b, c_in);
    for (size_t i = 0; i < r.cells.size(); ++i) store_element(out_type, c_out, r.cells[i], r.ref[i]);
  } else {
    const auto r = float_reference<double>(desc, a, b, c_in);
    for (size_t i = 0; i < r.cells.size(); ++i) store_element(out_type, c_out, r.cells[i], r.ref[i]);
  }
}

Comparison compare_with_reference(const GemmDesc& desc, const void* a, const void* b, const void* c_in,
                                  const void* c_gpu, const CompareOptions& options) {
  check_gemm(desc);
  const DataType out_type = output_type(desc);
  // A product with alpha 1, beta 0, one entry and tight strides is the common case of big checks: the
  // blocked, multi-threaded ReferenceProduct judges it the same way, faster. Another layout or op
  // combination goes to it too, its operands and C copied into the row-major plain product's order first:
  // a 1536^3 TT check took 2.5 s that way against 4.1 s on the general path (6.0 before its operands were
  // gathered; medians of 3 on a 2-core host).
  const bool plain = desc.batch == 1 && desc.alpha == 1.0 && desc.beta == 0.0 && desc.m > 0 && desc.n > 0 &&
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
  const uint64_t span = operand_extent(desc, 'C').elements;
  const uint64_t es = element_size(out_type);
  std::vector<char> described(span, 0);
  Comparison out = is_integer(desc.type)        ? compare_int(desc, a, b, c_in, c_gpu, described)
                   : desc.type == DataType::f64 ? compare_float<long double>(desc, a, b, c_in, c_gpu, options, described)
                                                : compare_float<double>(desc, a, b, c_in, c_gpu, options, described);
  // Gaps between rows and between batch entries: untouched, bit for bit.
  const auto* got = static_cast<const unsigned char*>(c_gpu);
  const auto* before = static_cast<const unsigned char*>(c_in);
  for (uint64_t i = 0; i < span; ++i) {
    if (!described[i] && std::memcmp(got + i * es, before + i * es, es) != 0) {
      if (out.bad_elements == 0 || i < out.first_bad) out.first_bad = i;
      ++out.bad_elements;
    }
  }
  out.passed = out.bad_elements == 0 &&
               (is_integer(desc.type) || (out.normwise_error <= out.bound && out.normwise_model_ratio <= 1.0));
  return out;
}

}  // namespace vkgemm
