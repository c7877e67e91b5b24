// The drop-in BLAS's one decision: does this GEMM run on the device, and did it.
#pragma once

#include <cstdint>

namespace vkgemm::blaslib {

// One column-major GEMM as the Fortran interface states it, arguments already checked and not a quick
// return: C = alpha op(A) op(B) + beta C with op(A) m x k, op(B) k x n, C m x n.
template <class T>
struct ColumnMajorGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  T alpha{};
  const T* a = nullptr;
  int64_t lda = 0;
  const T* b = nullptr;
  int64_t ldb = 0;
  T beta{};
  T* c = nullptr;
  int64_t ldc = 0;
};

// Runs `g` on the device when the settings route it there (its m·n·k at least VKGEMM_BLAS_THRESHOLD) and the
// device is usable: true when C holds the result. False leaves C untouched, for the caller's CPU BLAS: the
// product was under the threshold, or the device could not run it (the first such failure is reported on
// stderr, once per process; a device that cannot run at all, or this type, is not tried again).
// `routine` names the entry point for the per-call log (VKGEMM_BLAS_VERBOSE=2).
bool run_on_device(const ColumnMajorGemm<float>& g, const char* routine);
bool run_on_device(const ColumnMajorGemm<double>& g, const char* routine);

// Counts a call the CPU BLAS ran (for the summary VKGEMM_BLAS_VERBOSE prints at exit).
void count_cpu_call(const char* routine);

// Reports an entry point whose CPU BLAS cannot be found: once per name, on stderr.
void report_missing_cpu(const char* name);

// The reference BLAS's loops (xGEMM's, in double for the sums), for a call no CPU BLAS can take: slow, but
// never a missing result.
template <class T>
void loop_gemm(const ColumnMajorGemm<T>& g) {
  for (int64_t j = 0; j < g.n; ++j) {
    for (int64_t i = 0; i < g.m; ++i) {
      double sum = 0;
      for (int64_t l = 0; l < g.k && g.alpha != T(0); ++l) {
        const T a = g.trans_a ? g.a[l + i * g.lda] : g.a[i + l * g.lda];
        const T b = g.trans_b ? g.b[j + l * g.ldb] : g.b[l + j * g.ldb];
        sum += double(a) * double(b);
      }
      T& c = g.c[i + j * g.ldc];
      c = T(double(g.alpha) * sum + (g.beta == T(0) ? 0.0 : double(g.beta) * double(c)));
    }
  }
}

}  // namespace vkgemm::blaslib
