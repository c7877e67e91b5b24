// The CPU reference GEMM (double accumulation; long double for f64; wrap-around for int32) and the
// comparison against it. See reference.hpp for the bound and why it holds.
#include "vkgemm/reference.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "vkgemm/error.hpp"
#include "vkgemm/half.hpp"

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

// Judges c (as doubles) against the reference of a * b: elementwise |c - ref| <= bound * (|A||B|)_ij + absolute,
// normwise ||c - ref||_F <= bound * ||A||_F ||B||_F + absolute * sqrt(m n).
template <typename T>
Comparison compare_float(double bound, double absolute, uint32_t m, uint32_t n, uint32_t k, const T* a, const T* b,
                         const std::vector<double>& c) {
  std::vector<typename Acc<T>::type> ref;
  std::vector<double> abs_product;
  reference_float(m, n, k, a, b, ref, &abs_product);
  Comparison out;
  out.bound = bound;
  const double scale = frobenius(a, uint64_t{m} * k) * frobenius(b, uint64_t{k} * n);
  double diff2 = 0.0;
  const uint64_t count = uint64_t{m} * n;
  for (uint64_t i = 0; i < count; ++i) {
    const double got = c[i];
    const double diff = std::fabs(got - static_cast<double>(ref[i]));
    const double allowed = out.bound * abs_product[i] + absolute;
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
  const double slack = absolute * std::sqrt(static_cast<double>(count));
  out.normwise_error = scale > 0.0 ? std::max(0.0, std::sqrt(diff2) - slack) / scale
                                   : (diff2 > 0.0 ? std::sqrt(diff2) : 0.0);
  out.passed = out.bad_elements == 0 && out.normwise_error <= out.bound;
  return out;
}

template <typename T>
std::vector<double> to_doubles(const T* c, uint64_t count) {
  std::vector<double> out(count);
  for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<double>(c[i]);
  return out;
}

// f16 matrices as floats (exact).
std::vector<float> widen(const void* h, uint64_t count) {
  std::vector<float> out(count);
  for (uint64_t i = 0; i < count; ++i) out[i] = half_to_float(static_cast<const uint16_t*>(h)[i]);
  return out;
}

std::vector<double> result_as_doubles(DataType type, const void* c, uint64_t count) {
  std::vector<double> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    switch (type) {
      case DataType::f16: out[i] = half_to_float(static_cast<const uint16_t*>(c)[i]); break;
      case DataType::f32: out[i] = static_cast<const float*>(c)[i]; break;
      case DataType::f64: out[i] = static_cast<const double*>(c)[i]; break;
      case DataType::i32: out[i] = static_cast<const int32_t*>(c)[i]; break;
    }
  }
  return out;
}

void check_types(DataType input, DataType output) {
  const bool ok = input == DataType::f16 ? (output == DataType::f16 || output == DataType::f32) : output == input;
  if (!ok) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("reference: inputs of {} cannot give a result of {} (f16 inputs give f32 or f16; "
                            "other types their own)", to_string(input), to_string(output)));
  }
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
    case DataType::f16: return std::ldexp(1.0, -11);
    case DataType::i32: return 0.0;
  }
  return 0.0;
}

double error_bound(DataType type, uint32_t k) noexcept {
  return 2.0 * static_cast<double>(std::max<uint32_t>(k, 1)) * unit_roundoff(type);
}

double error_bound(DataType input, DataType output, uint32_t k, bool f16_accumulate) noexcept {
  if (input != DataType::f16) return error_bound(input, k);
  if (f16_accumulate) return error_bound(DataType::f16, k);
  return error_bound(DataType::f32, k) + (output == DataType::f16 ? unit_roundoff(DataType::f16) : 0.0);
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
    case DataType::f16: {
      std::vector<double> ref;
      const auto wa = widen(a, uint64_t{m} * k), wb = widen(b, uint64_t{k} * n);
      reference_float(m, n, k, wa.data(), wb.data(), ref, abs_product);
      for (uint64_t i = 0; i < count; ++i) static_cast<uint16_t*>(c)[i] = float_to_half(static_cast<float>(ref[i]));
      break;
    }
  }
}

void reference_gemm(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                    const void* b, void* c) {
  check_types(input, output);
  if (input != DataType::f16 || output == DataType::f16) return reference_gemm(input, m, n, k, a, b, c);
  std::vector<double> ref;
  const auto wa = widen(a, uint64_t{m} * k), wb = widen(b, uint64_t{k} * n);
  reference_float(m, n, k, wa.data(), wb.data(), ref, nullptr);
  for (uint64_t i = 0; i < ref.size(); ++i) static_cast<float*>(c)[i] = static_cast<float>(ref[i]);
}

Comparison compare_with_reference(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b,
                                  const void* c_gpu) {
  return compare_with_reference(type, type, m, n, k, a, b, c_gpu, false);
}

Comparison compare_with_reference(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                                  const void* b, const void* c_gpu, bool f16_accumulate) {
  check_types(input, output);
  const uint64_t count = uint64_t{m} * n;
  const double bound = error_bound(input, output, k, f16_accumulate);
  switch (input) {
    case DataType::f32:
      return compare_float(bound, 0.0, m, n, k, static_cast<const float*>(a), static_cast<const float*>(b),
                           to_doubles(static_cast<const float*>(c_gpu), count));
    case DataType::f64:
      return compare_float(bound, 0.0, m, n, k, static_cast<const double*>(a), static_cast<const double*>(b),
                           to_doubles(static_cast<const double*>(c_gpu), count));
    case DataType::f16: {
      // Results that small land among fp16's subnormals (spacing 2^-24): an absolute allowance per rounding.
      const double tiny = std::ldexp(1.0, -24);
      const double absolute = f16_accumulate ? tiny * std::max<uint32_t>(k, 1) : output == DataType::f16 ? tiny : 0.0;
      const auto wa = widen(a, uint64_t{m} * k), wb = widen(b, uint64_t{k} * n);
      return compare_float(bound, absolute, m, n, k, wa.data(), wb.data(), result_as_doubles(output, c_gpu, count));
    }
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
