// The CPU reference for the full BLAS call (layouts, op, ld, alpha/beta, strided batch) and its
// comparison; see reference.hpp for the bound and why it holds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "vkgemm/error.hpp"
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

template <typename T> struct Acc { using type = double; };
template <> struct Acc<double> { using type = long double; };

// Computes every described element of C: ref (in the accumulator type) and, for floats, the scale
// |alpha| (|op(A)||op(B)|)_ij + |beta| |C0_ij| of its elementwise bound. `cells` lists their indices.
template <typename T>
void compute(const GemmDesc& d, const T* a, const T* b, const T* c0, std::vector<uint64_t>& cells,
             std::vector<typename Acc<T>::type>& ref, std::vector<double>& scale, double& norm_ab2, double& norm_c2) {
  using A = typename Acc<T>::type;
  const Indexer ia = indexer(d, 'A'), ib = indexer(d, 'B'), ic = indexer(d, 'C');
  const bool reads_ab = d.alpha != 0.0 && d.k != 0;
  norm_ab2 = norm_c2 = 0.0;
  for (int64_t t = 0; t < d.batch; ++t) {
    double na = 0.0, nb = 0.0;
    if (reads_ab) {
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t p = 0; p < d.k; ++p) na += std::pow(static_cast<double>(a[ia(t, i, p)]), 2);
      for (int64_t p = 0; p < d.k; ++p)
        for (int64_t j = 0; j < d.n; ++j) nb += std::pow(static_cast<double>(b[ib(t, p, j)]), 2);
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
          s += std::fabs(d.beta) * std::fabs(static_cast<double>(c0[at]));
          norm_c2 += std::pow(static_cast<double>(c0[at]), 2);
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

template <typename T>
void reference_typed(const GemmDesc& d, const void* a, const void* b, const void* c_in, void* c_out) {
  const uint64_t span = operand_extent(d, 'C').elements;
  T* out = static_cast<T*>(c_out);
  if (span) std::memcpy(out, c_in, span * sizeof(T));
  std::vector<uint64_t> cells;
  if constexpr (std::is_same_v<T, int32_t>) {
    std::vector<int32_t> ref;
    compute_int(d, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), static_cast<const int32_t*>(c_in),
                cells, ref);
    for (size_t i = 0; i < cells.size(); ++i) out[cells[i]] = ref[i];
  } else {
    std::vector<typename Acc<T>::type> ref;
    std::vector<double> scale;
    double nab = 0, nc = 0;
    compute(d, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<const T*>(c_in), cells, ref, scale, nab,
            nc);
    for (size_t i = 0; i < cells.size(); ++i) out[cells[i]] = static_cast<T>(ref[i]);
  }
}

template <typename T>
Comparison compare_typed(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu) {
  const uint64_t span = operand_extent(d, 'C').elements;
  const T* got = static_cast<const T*>(c_gpu);
  const T* before = static_cast<const T*>(c_in);
  Comparison out;
  std::vector<uint64_t> cells;
  std::vector<char> described(span, 0);
  const auto bad = [&](uint64_t at) {
    if (out.bad_elements == 0 || at < out.first_bad) out.first_bad = at;
    ++out.bad_elements;
  };
  if constexpr (std::is_same_v<T, int32_t>) {
    std::vector<int32_t> ref;
    compute_int(d, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), before, cells, ref);
    for (size_t i = 0; i < cells.size(); ++i) {
      described[cells[i]] = 1;
      if (got[cells[i]] != ref[i]) bad(cells[i]);
    }
    out.worst_element_ratio = out.bad_elements ? std::numeric_limits<double>::infinity() : 0.0;
  } else {
    std::vector<typename Acc<T>::type> ref;
    std::vector<double> scale;
    double nab2 = 0, nc2 = 0;
    compute(d, static_cast<const T*>(a), static_cast<const T*>(b), before, cells, ref, scale, nab2, nc2);
    out.bound = 2.0 * static_cast<double>(d.k + 2) * unit_roundoff(d.type);
    double diff2 = 0.0;
    for (size_t i = 0; i < cells.size(); ++i) {
      described[cells[i]] = 1;
      const double g = static_cast<double>(got[cells[i]]);
      const double diff = std::fabs(g - static_cast<double>(ref[i]));
      const double allowed = out.bound * scale[i];
      double ratio = 0.0;
      if (!std::isfinite(g)) {
        ratio = std::numeric_limits<double>::infinity();
      } else if (diff > 0.0) {
        ratio = allowed > 0.0 ? diff / allowed : std::numeric_limits<double>::infinity();
      }
      if (ratio > 1.0) bad(cells[i]);
      out.worst_element_ratio = std::max(out.worst_element_ratio, ratio);
      diff2 += std::isfinite(diff) ? diff * diff : std::numeric_limits<double>::infinity();
    }
    const double norm_scale = std::fabs(d.alpha) * std::sqrt(nab2) + std::fabs(d.beta) * std::sqrt(nc2);
    out.normwise_error = norm_scale > 0.0 ? std::sqrt(diff2) / norm_scale : (diff2 > 0.0 ? std::sqrt(diff2) : 0.0);
    if (!(out.normwise_error <= out.bound)) out.passed = false;
  }
  // Gaps between rows and between batch entries: untouched, bit for bit.
  for (uint64_t i = 0; i < span; ++i) {
    if (!described[i] && std::memcmp(&got[i], &before[i], sizeof(T)) != 0) bad(i);
  }
  out.passed = out.bad_elements == 0 && (d.type == DataType::i32 || out.normwise_error <= out.bound);
  return out;
}

}  // namespace

void reference_gemm(const GemmDesc& desc, const void* a, const void* b, const void* c_in, void* c_out) {
  check_gemm(desc);
  switch (desc.type) {
    case DataType::f32: return reference_typed<float>(desc, a, b, c_in, c_out);
    case DataType::f64: return reference_typed<double>(desc, a, b, c_in, c_out);
    case DataType::i32: return reference_typed<int32_t>(desc, a, b, c_in, c_out);
  }
}

Comparison compare_with_reference(const GemmDesc& desc, const void* a, const void* b, const void* c_in,
                                  const void* c_gpu) {
  check_gemm(desc);
  // The plain product (row-major, no transposes, tight strides, one entry, alpha 1, beta 0) is the common
  // case of big checks: the blocked, multi-threaded ReferenceProduct judges it the same way, much faster.
  const bool plain = desc.layout == Layout::row_major && desc.op_a == Op::n && desc.op_b == Op::n &&
                     desc.batch == 1 && desc.alpha == 1.0 && desc.beta == 0.0 &&
                     operand_extent(desc, 'A').ld == std::max<int64_t>(1, desc.k) &&
                     operand_extent(desc, 'B').ld == std::max<int64_t>(1, desc.n) &&
                     operand_extent(desc, 'C').ld == std::max<int64_t>(1, desc.n);
  if (plain && desc.m > 0 && desc.n > 0) {
    return ReferenceProduct(desc.type, static_cast<uint32_t>(desc.m), static_cast<uint32_t>(desc.n),
                            static_cast<uint32_t>(desc.k), a, b)
        .compare(c_gpu);
  }
  switch (desc.type) {
    case DataType::f32: return compare_typed<float>(desc, a, b, c_in, c_gpu);
    case DataType::f64: return compare_typed<double>(desc, a, b, c_in, c_gpu);
    case DataType::i32: return compare_typed<int32_t>(desc, a, b, c_in, c_gpu);
  }
  throw Error(ErrorCode::invalid_argument, "compare_with_reference: unknown type");
}

}  // namespace vkgemm
