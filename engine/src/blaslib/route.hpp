// The drop-in BLAS's one decision: does this GEMM run on the device, and did it; and the loops that compute
// a product no CPU BLAS can take.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "vkgemm/vkgemm.h"

namespace vkgemm::blaslib {

// One column-major GEMM (or a strided batch of them) as the Fortran interface states it, arguments already
// checked and not a quick return: C_i = alpha op(A_i) op(B_i) + beta C_i with op(A) m x k, op(B) k x n,
// C m x n; A and B of `In`, C and the scalars of `T`. Strides in elements (batch 1: unused).
template <class T, class In = T>
struct ColumnMajorGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  T alpha{};
  const In* a = nullptr;
  int64_t lda = 0;
  const In* b = nullptr;
  int64_t ldb = 0;
  T beta{};
  T* c = nullptr;
  int64_t ldc = 0;
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

// The 16-bit floats, as bit patterns: IEEE binary16 and bfloat16 (each its own type, so a product's type
// says which).
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// Runs `g` on the device when the settings route it there (its m·n·k·batch at least VKGEMM_BLAS_THRESHOLD)
// and the device is usable: true when C holds the result. False leaves C untouched, for the caller's CPU
// BLAS: the product was under the threshold, or the device could not run it (the first such failure is
// reported on stderr, once per process; a device that cannot run at all, or this type, is not tried again).
// `routine` names the entry point for the per-call log (VKGEMM_BLAS_VERBOSE=2).
bool run_on_device(const ColumnMajorGemm<float>& g, const char* routine);
bool run_on_device(const ColumnMajorGemm<double>& g, const char* routine);
bool run_on_device(const ColumnMajorGemm<float, Half>& g, const char* routine);
bool run_on_device(const ColumnMajorGemm<float, BFloat16>& g, const char* routine);

// Counts a call the CPU BLAS ran (for the summary VKGEMM_BLAS_VERBOSE prints at exit).
void count_cpu_call(const char* routine);

// The library's engine (created at the first call that needs it, with the settings every routed GEMM's has),
// for vkgemm's PDGEMM to multiply a product of `work` = m·n·k on the same device: null where the library
// would keep that product on the CPU BLAS (below VKGEMM_BLAS_THRESHOLD, "never") or the device is off (none,
// or one that failed as a whole). Products run on it are the caller's to count.
vkgemm_engine* shared_engine(double work);

// Reports an entry point whose CPU BLAS cannot be found: once per name, on stderr.
void report_missing_cpu(const char* name);

inline double value(float x) { return x; }
inline double value(double x) { return x; }
inline double value(BFloat16 x) {
  const uint32_t bits = uint32_t(x.bits) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline double value(Half x) {
  const int exponent = (x.bits >> 10) & 0x1F;
  const int mantissa = x.bits & 0x3FF;
  const double sign = (x.bits & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0x1F) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);  // subnormal
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// The reference BLAS's loops (xGEMM's, in double for the sums), for a call no CPU BLAS can take: slow, but
// never a missing result. Each batch entry in turn.
template <class T, class In>
void loop_gemm(const ColumnMajorGemm<T, In>& g) {
  for (int64_t e = 0; e < g.batch; ++e) {
    const In* a = g.a + e * g.stride_a;
    const In* b = g.b + e * g.stride_b;
    T* c = g.c + e * g.stride_c;
    for (int64_t j = 0; j < g.n; ++j) {
      for (int64_t i = 0; i < g.m; ++i) {
        double sum = 0;
        for (int64_t l = 0; l < g.k && g.alpha != T(0); ++l) {
          const In x = g.trans_a ? a[l + i * g.lda] : a[i + l * g.lda];
          const In y = g.trans_b ? b[j + l * g.ldb] : b[l + j * g.ldb];
          sum += value(x) * value(y);
        }
        T& out = c[i + j * g.ldc];
        out = T(double(g.alpha) * sum + (g.beta == T(0) ? 0.0 : double(g.beta) * double(out)));
      }
    }
  }
}

}  // namespace vkgemm::blaslib
