// The CPU reference GEMM (double accumulation; long double for f64; wrap-around for int32) and the
// comparison against it. See reference.hpp for the bound and why it holds.
#include "vkgemm/reference.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "vkgemm/error.hpp"

namespace vkgemm {
namespace {

// Accumulator for each stored type.
template <typename T> struct Acc { using type = double; };
template <> struct Acc<double> { using type = long double; };

// Row by row, k outer and j inner, so both B and the accumulators stream.
template <typename T>
void reference_float(uint32_t m, uint32_t n, uint32_t k, const T* a, const T* b, std::vector<typename Acc<T>::type>& c,
                     std::vector<double>* abs_product) {
  using A = typename Acc<T>::type;
  c.assign(uint64_t{m} * n, A(0));
  if (abs_product) abs_product->assign(uint64_t{m} * n, 0.0);
  for (uint64_t i = 0; i < m; ++i) {
    A* crow = &c[i * n];
    double* prow = abs_product ? &(*abs_product)[i * n] : nullptr;
    for (uint64_t p = 0; p < k; ++p) {
      const A aip = static_cast<A>(a[i * k + p]);
      const T* brow = &b[p * n];
      for (uint64_t j = 0; j < n; ++j) crow[j] += aip * static_cast<A>(brow[j]);
      if (prow) {
        const double abs_a = std::fabs(static_cast<double>(aip));
        for (uint64_t j = 0; j < n; ++j) prow[j] += abs_a * std::fabs(static_cast<double>(brow[j]));
      }
    }
  }
}

void reference_int(uint32_t m, uint32_t n, uint32_t k, const int32_t* a, const int32_t* b, int32_t* c) {
  std::vector<uint32_t> row(n);
  for (uint64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0u);
    for (uint64_t p = 0; p < k; ++p) {
      const auto aip = static_cast<uint32_t>(a[i * k + p]);
      for (uint64_t j = 0; j < n; ++j) row[j] += aip * static_cast<uint32_t>(b[p * n + j]);  // wraps like the GPU
    }
    std::memcpy(&c[i * n], row.data(), n * sizeof(int32_t));
  }
}

template <typename T>
double frobenius(const T* x, uint64_t count) {
  double s = 0.0;
  for (uint64_t i = 0; i < count; ++i) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return std::sqrt(s);
}

template <typename T>
Comparison compare_float(DataType type, uint32_t m, uint32_t n, uint32_t k, const T* a, const T* b, const T* c) {
  std::vector<typename Acc<T>::type> ref;
  std::vector<double> abs_product;
  reference_float(m, n, k, a, b, ref, &abs_product);
  Comparison out;
  out.bound = error_bound(type, k);
  const double scale = frobenius(a, uint64_t{m} * k) * frobenius(b, uint64_t{k} * n);
  double diff2 = 0.0;
  const uint64_t count = uint64_t{m} * n;
  for (uint64_t i = 0; i < count; ++i) {
    const double got = static_cast<double>(c[i]);
    const double diff = std::fabs(got - static_cast<double>(ref[i]));
    const double allowed = out.bound * abs_product[i];
    double ratio = 0.0;
    if (!std::isfinite(got)) {
      ratio = std::numeric_limits<double>::infinity();
    } else if (diff > 0.0) {
      ratio = allowed > 0.0 ? diff / allowed : std::numeric_limits<double>::infinity();
    }
    if (ratio > 1.0) {
      if (out.bad_elements == 0) out.first_bad = i;
      ++out.bad_elements;
    }
    out.worst_element_ratio = std::max(out.worst_element_ratio, ratio);
    diff2 += std::isfinite(diff) ? diff * diff : std::numeric_limits<double>::infinity();
  }
  out.normwise_error = scale > 0.0 ? std::sqrt(diff2) / scale : (diff2 > 0.0 ? std::sqrt(diff2) : 0.0);
  out.passed = out.bad_elements == 0 && out.normwise_error <= out.bound;
  return out;
}

Comparison compare_int(uint32_t m, uint32_t n, uint32_t k, const int32_t* a, const int32_t* b, const int32_t* c) {
  std::vector<int32_t> ref(uint64_t{m} * n);
  reference_int(m, n, k, a, b, ref.data());
  Comparison out;
  for (uint64_t i = 0; i < ref.size(); ++i) {
    if (ref[i] != c[i]) {
      if (out.bad_elements == 0) out.first_bad = i;
      ++out.bad_elements;
    }
  }
  out.passed = out.bad_elements == 0;
  out.worst_element_ratio = out.passed ? 0.0 : std::numeric_limits<double>::infinity();
  return out;
}

}  // namespace

double unit_roundoff(DataType type) noexcept {
  switch (type) {
    case DataType::f32: return std::ldexp(1.0, -24);
    case DataType::f64: return std::ldexp(1.0, -53);
    case DataType::i32: return 0.0;
  }
  return 0.0;
}

double error_bound(DataType type, uint32_t k) noexcept {
  return 2.0 * static_cast<double>(std::max<uint32_t>(k, 1)) * unit_roundoff(type);
}

void reference_gemm(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b, void* c,
                    std::vector<double>* abs_product) {
  const uint64_t count = uint64_t{m} * n;
  switch (type) {
    case DataType::f32: {
      std::vector<double> ref;
      reference_float(m, n, k, static_cast<const float*>(a), static_cast<const float*>(b), ref, abs_product);
      for (uint64_t i = 0; i < count; ++i) static_cast<float*>(c)[i] = static_cast<float>(ref[i]);
      break;
    }
    case DataType::f64: {
      std::vector<long double> ref;
      reference_float(m, n, k, static_cast<const double*>(a), static_cast<const double*>(b), ref, abs_product);
      for (uint64_t i = 0; i < count; ++i) static_cast<double*>(c)[i] = static_cast<double>(ref[i]);
      break;
    }
    case DataType::i32:
      reference_int(m, n, k, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), static_cast<int32_t*>(c));
      if (abs_product) abs_product->clear();
      break;
  }
}

Comparison compare_with_reference(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b,
                                  const void* c_gpu) {
  switch (type) {
    case DataType::f32:
      return compare_float(type, m, n, k, static_cast<const float*>(a), static_cast<const float*>(b),
                           static_cast<const float*>(c_gpu));
    case DataType::f64:
      return compare_float(type, m, n, k, static_cast<const double*>(a), static_cast<const double*>(b),
                           static_cast<const double*>(c_gpu));
    case DataType::i32:
      return compare_int(m, n, k, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b),
                         static_cast<const int32_t*>(c_gpu));
  }
  throw Error(ErrorCode::invalid_argument, "compare_with_reference: unknown type");
}

std::string Comparison::summary() const {
  if (bound == 0.0) {  // int32
    return passed ? "exact match" : fmt::format("{} elements differ, the first at index {}", bad_elements, first_bad);
  }
  auto s = fmt::format("normwise error {:.3g} (bound {:.3g}), worst element at {:.3g} of its bound", normwise_error,
                       bound, worst_element_ratio);
  if (bad_elements) s += fmt::format("; {} elements outside, the first at index {}", bad_elements, first_bad);
  return s;
}

}  // namespace vkgemm
