// The CPU reference for the full BLAS call (layouts, op, ld, alpha/beta, strided batch) and its
// comparison; see reference.hpp for the bound and why it holds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "element_access.hpp"
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

// Computes every described element of C: ref (accumulated in A) and the scale |alpha| (|op(A)||op(B)|)_ij +
// |beta| |C0_ij| of its elementwise bound. `cells` lists their indices.
template <typename A>
void compute(const GemmDesc& d, const double* a, const double* b, const double* c0, std::vector<uint64_t>& cells,
             std::vector<A>& ref, std::vector<double>& scale, double& norm_ab2, double& norm_c2) {
  const Indexer ia = indexer(d, 'A'), ib = indexer(d, 'B'), ic = indexer(d, 'C');
  const bool reads_ab = d.alpha != 0.0 && d.k != 0;
  norm_ab2 = norm_c2 = 0.0;
  for (int64_t t = 0; t < d.batch; ++t) {
    double na = 0.0, nb = 0.0;
    if (reads_ab) {
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t p = 0; p < d.k; ++p) na += std::pow(a[ia(t, i, p)], 2);
      for (int64_t p = 0; p < d.k; ++p)
        for (int64_t j = 0; j < d.n; ++j) nb += std::pow(b[ib(t, p, j)], 2);
    }
    norm_ab2 += na * nb;
    for (int64_t i = 0; i < d.m; ++i) {
      for (int64_t j = 0; j < d.n; ++j) {
        A sum = 0;
        double abs_sum = 0.0;
        if (reads_ab) {
          for (int64_t p = 0; p < d.k; ++p) {
            const A x = static_cast<A>(a[ia(t, i, p)]), y = static_cast<A>(b[ib(t, p, j)]);
            sum += x * y;
            abs_sum += std::fabs(static_cast<double>(x * y));
          }
        }
        const uint64_t at = ic(t, i, j);
        A r = static_cast<A>(d.alpha) * sum;
        double s = std::fabs(d.alpha) * abs_sum;
        if (d.beta != 0.0) {
          r += static_cast<A>(d.beta) * static_cast<A>(c0[at]);
          s += std::fabs(d.beta) * std::fabs(c0[at]);
          norm_c2 += std::pow(c0[at], 2);
        }
        cells.push_back(at);
        ref.push_back(r);
        scale.push_back(s);
      }
    }
  }
}

void compute_int(const GemmDesc& d, const int32_t* a, const int32_t* b, const int32_t* c0, std::vector<uint64_t>& cells,
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
            sum += static_cast<uint32_t>(a[ia(t, i, p)]) * static_cast<uint32_t>(b[ib(t, p, j)]);
        const uint64_t at = ic(t, i, j);
        uint32_t r = alpha * sum;
        if (d.beta != 0.0) r += beta * static_cast<uint32_t>(c0[at]);
        cells.push_back(at);
        ref.push_back(static_cast<int32_t>(r));
      }
}

// The float reference of every described element of C, from widened operands: double sums, long double
// for f64 (as the plain reference).
struct FloatReference {
  std::vector<uint64_t> cells;
  std::vector<long double> ref;
  std::vector<double> scale;
  double norm_ab2 = 0.0, norm_c2 = 0.0;
};

FloatReference float_reference(const GemmDesc& d, const void* a, const void* b, const void* c_in) {
  const bool reads_ab = d.alpha != 0.0 && d.k != 0;
  const auto wa = widen(d.type, reads_ab ? a : nullptr, operand_extent(d, 'A').elements);
  const auto wb = widen(d.type, reads_ab ? b : nullptr, operand_extent(d, 'B').elements);
  const auto wc = widen(output_type(d), d.beta != 0.0 ? c_in : nullptr, operand_extent(d, 'C').elements);
  FloatReference r;
  if (d.type == DataType::f64) {
    compute(d, wa.data(), wb.data(), wc.data(), r.cells, r.ref, r.scale, r.norm_ab2, r.norm_c2);
  } else {
    std::vector<double> ref;
    compute(d, wa.data(), wb.data(), wc.data(), r.cells, ref, r.scale, r.norm_ab2, r.norm_c2);
    r.ref.assign(ref.begin(), ref.end());
  }
  return r;
}

Comparison compare_int(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                       std::vector<char>& described) {
  Comparison out;
  std::vector<uint64_t> cells;
  std::vector<int32_t> ref;
  compute_int(d, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), static_cast<const int32_t*>(c_in),
              cells, ref);
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

Comparison compare_float(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                         bool f16_accumulate, std::vector<char>& described) {
  const DataType out_type = output_type(d);
  Comparison out;
  const FloatReference r = float_reference(d, a, b, c_in);
  const auto k = static_cast<uint32_t>(std::min<int64_t>(d.k + 2, std::numeric_limits<uint32_t>::max()));
  out.bound = error_bound(d.type, out_type, k, f16_accumulate);
  // f16 results that small land among fp16's subnormals (spacing 2^-24): an absolute allowance.
  const double absolute = out_type != DataType::f16 ? 0.0 : std::ldexp(1.0, -24) * (f16_accumulate ? k : 1);
  double diff2 = 0.0;
  for (size_t i = 0; i < r.cells.size(); ++i) {
    described[r.cells[i]] = 1;
    const double g = load_element(out_type, c_gpu, r.cells[i]);
    const double diff = std::fabs(g - static_cast<double>(r.ref[i]));
    const double allowed = out.bound * r.scale[i] + absolute;
    double ratio = 0.0;
    if (!std::isfinite(g)) {
      ratio = std::numeric_limits<double>::infinity();
    } else if (diff > 0.0) {
      ratio = allowed > 0.0 ? diff / allowed : std::numeric_limits<double>::infinity();
    }
    if (ratio > 1.0) {
      if (out.bad_elements == 0 || r.cells[i] < out.first_bad) out.first_bad = r.cells[i];
      ++out.bad_elements;
    }
    out.worst_element_ratio = std::max(out.worst_element_ratio, ratio);
    diff2 += std::isfinite(diff) ? diff * diff : std::numeric_limits<double>::infinity();
  }
  const double slack = absolute * std::sqrt(static_cast<double>(r.cells.size()));
  const double norm = std::max(0.0, std::sqrt(diff2) - slack);
  const double norm_scale = std::fabs(d.alpha) * std::sqrt(r.norm_ab2) + std::fabs(d.beta) * std::sqrt(r.norm_c2);
  out.normwise_error = norm_scale > 0.0 ? norm / norm_scale : norm;
  return out;
}

}  // namespace

void reference_gemm(const GemmDesc& desc, const void* a, const void* b, const void* c_in, void* c_out) {
  check_gemm(desc);
  const DataType out_type = output_type(desc);
  const uint64_t span = operand_extent(desc, 'C').elements;
  if (span) std::memcpy(c_out, c_in, span * element_size(out_type));
  if (desc.type == DataType::i32) {
    std::vector<uint64_t> cells;
    std::vector<int32_t> ref;
    compute_int(desc, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b),
                static_cast<const int32_t*>(c_in), cells, ref);
    for (size_t i = 0; i < cells.size(); ++i) static_cast<int32_t*>(c_out)[cells[i]] = ref[i];
    return;
  }
  const FloatReference r = float_reference(desc, a, b, c_in);
  for (size_t i = 0; i < r.cells.size(); ++i) store_element(out_type, c_out, r.cells[i], r.ref[i]);
}

Comparison compare_with_reference(const GemmDesc& desc, const void* a, const void* b, const void* c_in,
                                  const void* c_gpu, bool f16_accumulate) {
  check_gemm(desc);
  const DataType out_type = output_type(desc);
  // The plain product (row-major, no transposes, tight strides, one entry, alpha 1, beta 0) is the common
  // case of big checks: the blocked, multi-threaded ReferenceProduct judges it the same way, much faster.
  const bool plain = desc.layout == Layout::row_major && desc.op_a == Op::n && desc.op_b == Op::n &&
                     desc.batch == 1 && desc.alpha == 1.0 && desc.beta == 0.0 &&
                     operand_extent(desc, 'A').ld == std::max<int64_t>(1, desc.k) &&
                     operand_extent(desc, 'B').ld == std::max<int64_t>(1, desc.n) &&
                     operand_extent(desc, 'C').ld == std::max<int64_t>(1, desc.n);
  if (plain && desc.m > 0 && desc.n > 0) {
    return ReferenceProduct(desc.type, out_type, static_cast<uint32_t>(desc.m), static_cast<uint32_t>(desc.n),
                            static_cast<uint32_t>(desc.k), a, b, f16_accumulate)
        .compare(c_gpu);
  }
  const uint64_t span = operand_extent(desc, 'C').elements;
  const uint64_t es = element_size(out_type);
  std::vector<char> described(span, 0);
  Comparison out = desc.type == DataType::i32 ? compare_int(desc, a, b, c_in, c_gpu, described)
                                              : compare_float(desc, a, b, c_in, c_gpu, f16_accumulate, described);
  // Gaps between rows and between batch entries: untouched, bit for bit.
  const auto* got = static_cast<const unsigned char*>(c_gpu);
  const auto* before = static_cast<const unsigned char*>(c_in);
  for (uint64_t i = 0; i < span; ++i) {
    if (!described[i] && std::memcmp(got + i * es, before + i * es, es) != 0) {
      if (out.bad_elements == 0 || i < out.first_bad) out.first_bad = i;
      ++out.bad_elements;
    }
  }
  out.passed = out.bad_elements == 0 && (desc.type == DataType::i32 || out.normwise_error <= out.bound);
  return out;
}

}  // namespace vkgemm
