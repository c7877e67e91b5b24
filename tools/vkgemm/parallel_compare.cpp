// Combining blocks: elementwise results (bad elements, the first of them, the worst ratio) combine
// directly. The normwise error of block i is e_i = ||dC_i|| / (||A_i|| ||B||), so ||dC_i||^2 is
// (e_i ||A_i|| ||B||)^2, and the whole product's error is sqrt(sum ||dC_i||^2) / (||A|| ||B||), held to
// the same bound (it depends only on k and the type).
#include "parallel_compare.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <thread>
#include <vector>

#include "vkgemm/half.hpp"

namespace vkgemm::cli {
namespace {

double element(DataType type, const void* x, uint64_t i) {
  switch (type) {
    case DataType::f32: return static_cast<const float*>(x)[i];
    case DataType::f64: return static_cast<const double*>(x)[i];
    case DataType::i32: return static_cast<const int32_t*>(x)[i];
    case DataType::f16: return half_to_float(static_cast<const uint16_t*>(x)[i]);
    case DataType::bf16: return bfloat16_to_float(static_cast<const uint16_t*>(x)[i]);
    case DataType::i8: return static_cast<const int8_t*>(x)[i];
    case DataType::u8: return static_cast<const uint8_t*>(x)[i];
  }
  return 0.0;
}

double frobenius(DataType type, const void* x, uint64_t count) {
  double s = 0.0;
  for (uint64_t i = 0; i < count; ++i) {
    const double v = element(type, x, i);
    s += v * v;
  }
  return std::sqrt(s);
}

}  // namespace

Comparison parallel_compare(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b,
                            const void* c_gpu, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Blocks of at least 16 rows: below that the threads cost more than they save.
  const uint32_t blocks = std::min<uint32_t>(threads, std::max<uint32_t>(1, m / 16));
  if (blocks <= 1) return compare_with_reference(type, m, n, k, a, b, c_gpu);

  const uint64_t es = element_size(type), c_es = element_size(default_output_type(type));
  const auto* pa = static_cast<const std::byte*>(a);
  const auto* pc = static_cast<const std::byte*>(c_gpu);
  std::vector<uint32_t> first_row(blocks + 1);
  for (uint32_t i = 0; i <= blocks; ++i) first_row[i] = static_cast<uint32_t>(uint64_t{m} * i / blocks);
  std::vector<Comparison> parts(blocks);
  std::vector<double> a_norms(blocks);
  std::vector<std::exception_ptr> errors(blocks);
  {
    std::vector<std::jthread> workers;
    for (uint32_t i = 0; i < blocks; ++i) {
      workers.emplace_back([&, i] {
        try {
          const uint32_t r0 = first_row[i], rows = first_row[i + 1] - first_row[i];
          parts[i] = compare_with_reference(type, rows, n, k, pa + uint64_t{r0} * k * es, b,
                                            pc + uint64_t{r0} * n * c_es);
          a_norms[i] = frobenius(type, pa + uint64_t{r0} * k * es, uint64_t{rows} * k);
        } catch (...) {
          errors[i] = std::current_exception();  // rethrown on this thread below
        }
      });
    }
  }  // the jthreads join here
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);

  Comparison out;
  out.bound = parts[0].bound;
  const double b_norm = frobenius(type, b, uint64_t{k} * n);
  double diff2 = 0.0, a2 = 0.0;
  for (uint32_t i = 0; i < blocks; ++i) {
    const Comparison& p = parts[i];
    if (p.bad_elements && !out.bad_elements) out.first_bad = uint64_t{first_row[i]} * n + p.first_bad;
    out.bad_elements += p.bad_elements;
    out.worst_element_ratio = std::max(out.worst_element_ratio, p.worst_element_ratio);
    const double scale = a_norms[i] * b_norm;
    const double d = scale > 0.0 ? p.normwise_error * scale : p.normwise_error;
    diff2 += d * d;
    a2 += a_norms[i] * a_norms[i];
  }
  if (is_integer(type)) {  // exact comparison: no norms
    out.passed = out.bad_elements == 0;
    return out;
  }
  const double scale = std::sqrt(a2) * b_norm;
  out.normwise_error = scale > 0.0 ? std::sqrt(diff2) / scale : std::sqrt(diff2);
  out.passed = out.bad_elements == 0 && out.normwise_error <= out.bound;
  return out;
}

}  // namespace vkgemm::cli
