// The CPU reference GEMM (double accumulation; long double for f64; wrap-around for int32), spread over
// every core by rows, and the comparison against it. See reference.hpp for the bound and why it holds.
#include "vkgemm/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "vkgemm/error.hpp"

namespace vkgemm {
namespace {

// Runs body(row_begin, row_end) over [0, m) on up to every core; small products stay on one thread.
template <typename F>
void parallel_rows(uint32_t m, uint64_t work, F&& body) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = work < (1u << 22) ? 1u : std::min<unsigned>(cores, std::max(1u, m / 4));
  if (threads == 1) {
    body(0u, m);
    return;
  }
  std::vector<std::thread> pool;
  const uint32_t per = (m + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const uint32_t begin = std::min(m, t * per), end = std::min(m, begin + per);
    if (begin < end) pool.emplace_back([&body, begin, end] { body(begin, end); });
  }
  for (auto& th : pool) th.join();
}

// Row by row, k outer and j inner, so B and the accumulators stream. Acc is double or long double.
template <typename T, typename Acc>
void reference_float(uint32_t m, uint32_t n, uint32_t k, const T* a, const T* b, Acc* c, double* abs_product) {
  parallel_rows(m, uint64_t{m} * n * k, [&](uint32_t begin, uint32_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      Acc* crow = c + i * n;
      double* prow = abs_product ? abs_product + i * n : nullptr;
      std::fill(crow, crow + n, Acc(0));
      if (prow) std::fill(prow, prow + n, 0.0);
      for (uint64_t p = 0; p < k; ++p) {
        const Acc aip = static_cast<Acc>(a[i * k + p]);
        const T* brow = b + p * n;
        for (uint64_t j = 0; j < n; ++j) crow[j] += aip * static_cast<Acc>(brow[j]);
        if (prow) {
          const double abs_a = std::fabs(static_cast<double>(aip));
          for (uint64_t j = 0; j < n; ++j) prow[j] += abs_a * std::fabs(static_cast<double>(brow[j]));
        }
      }
    }
  });
}

void reference_int(uint32_t m, uint32_t n, uint32_t k, const int32_t* a, const int32_t* b, int32_t* c) {
  parallel_rows(m, uint64_t{m} * n * k, [&](uint32_t begin, uint32_t end) {
    std::vector<uint32_t> row(n);
    for (uint64_t i = begin; i < end; ++i) {
      std::fill(row.begin(), row.end(), 0u);
      for (uint64_t p = 0; p < k; ++p) {
        const auto aip = static_cast<uint32_t>(a[i * k + p]);
        for (uint64_t j = 0; j < n; ++j) row[j] += aip * static_cast<uint32_t>(b[p * n + j]);  // wraps like the GPU
      }
      std::memcpy(&c[i * n], row.data(), n * sizeof(int32_t));
    }
  });
}

template <typename T>
double frobenius(const T* x, uint64_t count) {
  double s = 0.0;
  for (uint64_t i = 0; i < count; ++i) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return std::sqrt(s);
}

double element(DataType type, const void* c, uint64_t i) {
  switch (type) {
    case DataType::f32: return static_cast<const float*>(c)[i];
    case DataType::f64: return static_cast<const double*>(c)[i];
    case DataType::i32: return static_cast<const int32_t*>(c)[i];
  }
  return 0.0;
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
  double* abs = nullptr;
  if (abs_product) {
    abs_product->assign(type == DataType::i32 ? 0 : count, 0.0);
    abs = type == DataType::i32 ? nullptr : abs_product->data();
  }
  switch (type) {
    case DataType::f32: {
      std::vector<double> ref(count);
      reference_float(m, n, k, static_cast<const float*>(a), static_cast<const float*>(b), ref.data(), abs);
      for (uint64_t i = 0; i < count; ++i) static_cast<float*>(c)[i] = static_cast<float>(ref[i]);
      break;
    }
    case DataType::f64: {
      std::vector<long double> ref(count);
      reference_float(m, n, k, static_cast<const double*>(a), static_cast<const double*>(b), ref.data(), abs);
      for (uint64_t i = 0; i < count; ++i) static_cast<double*>(c)[i] = static_cast<double>(ref[i]);
      break;
    }
    case DataType::i32:
      reference_int(m, n, k, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), static_cast<int32_t*>(c));
      break;
  }
}

ReferenceProduct::ReferenceProduct(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b)
    : type_(type), m_(m), n_(n), k_(k) {
  const uint64_t count = uint64_t{m} * n;
  value_.resize(count);
  switch (type) {
    case DataType::f32: {
      std::vector<double> ref(count);
      abs_product_.resize(count);
      reference_float(m, n, k, static_cast<const float*>(a), static_cast<const float*>(b), ref.data(),
                      abs_product_.data());
      std::copy(ref.begin(), ref.end(), value_.begin());
      scale_ = frobenius(static_cast<const float*>(a), uint64_t{m} * k) *
               frobenius(static_cast<const float*>(b), uint64_t{k} * n);
      break;
    }
    case DataType::f64:
      abs_product_.resize(count);
      reference_float(m, n, k, static_cast<const double*>(a), static_cast<const double*>(b), value_.data(),
                      abs_product_.data());
      scale_ = frobenius(static_cast<const double*>(a), uint64_t{m} * k) *
               frobenius(static_cast<const double*>(b), uint64_t{k} * n);
      break;
    case DataType::i32: {
      std::vector<int32_t> ref(count);
      reference_int(m, n, k, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), ref.data());
      std::copy(ref.begin(), ref.end(), value_.begin());
      break;
    }
  }
}

Comparison ReferenceProduct::compare(const void* c_gpu) const {
  Comparison out;
  const uint64_t count = uint64_t{m_} * n_;
  const auto mark_bad = [&](uint64_t i) {
    if (out.bad_elements == 0) out.first_bad = i;
    ++out.bad_elements;
  };
  if (type_ == DataType::i32) {
    for (uint64_t i = 0; i < count; ++i) {
      if (static_cast<long double>(element(type_, c_gpu, i)) != value_[i]) mark_bad(i);
    }
    out.passed = out.bad_elements == 0;
    out.worst_element_ratio = out.passed ? 0.0 : std::numeric_limits<double>::infinity();
    return out;
  }
  out.bound = error_bound(type_, k_);
  long double diff2 = 0.0L;
  for (uint64_t i = 0; i < count; ++i) {
    const double got = element(type_, c_gpu, i);
    const long double diff = std::fabs(static_cast<long double>(got) - value_[i]);
    const double allowed = out.bound * abs_product_[i];
    double ratio = 0.0;
    if (!std::isfinite(got)) {
      ratio = std::numeric_limits<double>::infinity();
    } else if (diff > 0.0L) {
      ratio = allowed > 0.0 ? static_cast<double>(diff) / allowed : std::numeric_limits<double>::infinity();
    }
    if (ratio > 1.0) mark_bad(i);
    out.worst_element_ratio = std::max(out.worst_element_ratio, ratio);
    diff2 += std::isfinite(got) ? diff * diff : std::numeric_limits<long double>::infinity();
  }
  const double norm = static_cast<double>(std::sqrt(diff2));
  out.normwise_error = scale_ > 0.0 ? norm / scale_ : norm;
  out.passed = out.bad_elements == 0 && out.normwise_error <= out.bound;
  return out;
}

Comparison compare_with_reference(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b,
                                  const void* c_gpu) {
  return ReferenceProduct(type, m, n, k, a, b).compare(c_gpu);
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
