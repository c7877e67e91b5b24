// The drop-in BLAS's exported GEMMs: the Fortran interface (sgemm_, dgemm_), CBLAS (cblas_sgemm,
// cblas_dgemm) and the ILP64 CBLAS names NumPy's wheels call in their bundled OpenBLAS (cblas_sgemm64_,
// scipy_cblas_sgemm64_, and the d ones). Each checks its arguments as the reference BLAS does, returns where
// the reference returns at once, offers the product to the device (route.hpp), and otherwise calls the same
// routine of the CPU BLAS (cpu_blas.hpp).
// Illegal arguments: the Fortran entry points call xerbla_ with the reference's routine name and parameter
// number (sgemm.f's checks, in its order), the program's xerbla_ where it has one (the netlib testers do),
// found at run time; the CBLAS entry points hand the whole call to the CPU BLAS's CBLAS, which reports it its
// own way (cblas_xerbla, with the row-major renumbering the reference's CBLAS does).
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "blaslib/cpu_blas.hpp"
#include "blaslib/route.hpp"

#define VKGEMM_BLAS_EXPORT extern "C" __attribute__((visibility("default")))

namespace vkgemm::blaslib {
namespace {

template <class T, class I>
using FortranGemm = void (*)(const char*, const char*, const I*, const I*, const I*, const T*, const T*, const I*,
                             const T*, const I*, const T*, T*, const I*, size_t, size_t);
template <class T, class I>
using CblasGemm = void (*)(int, int, int, I, I, I, T, const T*, I, const T*, I, T, T*, I);
using Xerbla = void (*)(const char*, const int*, size_t);

enum { kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112, kConjTrans = 113 };

char upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }

// sgemm.f's checks, in its order: 0, or the number of the first illegal parameter.
template <class I>
int reference_info(char ta, char tb, I m, I n, I k, I lda, I ldb, I ldc) {
  ta = upper(ta), tb = upper(tb);
  const bool nota = ta == 'N', notb = tb == 'N';
  const I rows_a = nota ? m : k, rows_b = notb ? k : n;
  if (!nota && ta != 'C' && ta != 'T') return 1;
  if (!notb && tb != 'C' && tb != 'T') return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max<I>(1, rows_a)) return 8;
  if (ldb < std::max<I>(1, rows_b)) return 10;
  if (ldc < std::max<I>(1, m)) return 13;
  return 0;
}

// sgemm.f's quick return: nothing to compute, C unchanged.
template <class T, class I>
bool quick_return(I m, I n, I k, T alpha, T beta) {
  return m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1));
}

void call_xerbla(const char* routine, int info) {
  // The program's own xerbla_ first (RTLD_DEFAULT: the global scope, the executable first), else the CPU
  // BLAS's (loaded privately, as a Python extension's BLAS is, it is not in the global scope). This library
  // defines none.
  auto xerbla = reinterpret_cast<Xerbla>(dlsym(RTLD_DEFAULT, "xerbla_"));
  if (!xerbla) xerbla = reinterpret_cast<Xerbla>(cpu_symbol("xerbla_"));
  if (xerbla) {
    xerbla(routine, &info, 6);
    return;
  }
  std::fprintf(stderr, " ** On entry to %.6s parameter number %2d had an illegal value\n", routine, info);
}

template <class T, class I>
void fortran_gemm(const char* name, const char* xerbla_name, const char* ta, const char* tb, const I* m, const I* n,
                  const I* k, const T* alpha, const T* a, const I* lda, const T* b, const I* ldb, const T* beta, T* c,
                  const I* ldc) {
  if (const int info = reference_info<I>(*ta, *tb, *m, *n, *k, *lda, *ldb, *ldc)) {
    call_xerbla(xerbla_name, info);
    return;
  }
  if (quick_return(*m, *n, *k, *alpha, *beta)) return;
  const ColumnMajorGemm<T> g{upper(*ta) != 'N', upper(*tb) != 'N', *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc};
  if (run_on_device(g, name)) return;
  count_cpu_call(name);
  if (auto cpu = reinterpret_cast<FortranGemm<T, I>>(cpu_symbol(name))) {
    cpu(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, 1);
    return;
  }
  report_missing_cpu(name);
  loop_gemm(g);
}

bool trans_of(int trans, bool& t) {
  if (trans != kNoTrans && trans != kTrans && trans != kConjTrans) return false;
  t = trans != kNoTrans;  // real types: the conjugate transpose is the transpose
  return true;
}

template <class T, class I>
void cblas_gemm(const char* name, int layout, int trans_a, int trans_b, I m, I n, I k, T alpha, const T* a, I lda,
                const T* b, I ldb, T beta, T* c, I ldc) {
  auto cpu = reinterpret_cast<CblasGemm<T, I>>(cpu_symbol(name));
  bool ta = false, tb = false;
  const bool legal = (layout == kRowMajor || layout == kColMajor) && trans_of(trans_a, ta) && trans_of(trans_b, tb);
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the reference CBLAS's own swap.
  const ColumnMajorGemm<T> g = layout == kRowMajor
                                   ? ColumnMajorGemm<T>{tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc}
                                   : ColumnMajorGemm<T>{ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
  if (!legal || reference_info<I>(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', I(g.m), I(g.n), I(g.k), I(g.lda),
                                  I(g.ldb), I(g.ldc)) != 0) {
    if (cpu) {
      cpu(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    } else {
      std::fprintf(stderr, "vkgemm-blas: %s was called with an illegal argument (and no CPU BLAS has it to say which)\n",
                   name);
    }
    return;
  }
  if (quick_return(m, n, k, alpha, beta)) return;
  if (run_on_device(g, name)) return;
  count_cpu_call(name);
  if (cpu) {
    cpu(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  report_missing_cpu(name);
  loop_gemm(g);
}

}  // namespace
}  // namespace vkgemm::blaslib

using vkgemm::blaslib::cblas_gemm;
using vkgemm::blaslib::fortran_gemm;

VKGEMM_BLAS_EXPORT void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
                               const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                               const float* beta, float* c, const int* ldc, size_t, size_t) {
  fortran_gemm("sgemm_", "SGEMM ", ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

VKGEMM_BLAS_EXPORT void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
                               const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
                               const double* beta, double* c, const int* ldc, size_t, size_t) {
  fortran_gemm("dgemm_", "DGEMM ", ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The CBLAS entry points, LP64 (int) and ILP64 (int64_t, NumPy's wheels' OpenBLAS), one definition each.
#define VKGEMM_CBLAS_GEMM(symbol, T, I)                                                                           \
  VKGEMM_BLAS_EXPORT void symbol(int layout, int ta, int tb, I m, I n, I k, T alpha, const T* a, I lda,         \
                                 const T* b, I ldb, T beta, T* c, I ldc) {                                     \
    cblas_gemm<T, I>(#symbol, layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                   \
  }
VKGEMM_CBLAS_GEMM(cblas_sgemm, float, int)
VKGEMM_CBLAS_GEMM(cblas_dgemm, double, int)
VKGEMM_CBLAS_GEMM(cblas_sgemm64_, float, int64_t)
VKGEMM_CBLAS_GEMM(cblas_dgemm64_, double, int64_t)
VKGEMM_CBLAS_GEMM(scipy_cblas_sgemm64_, float, int64_t)
VKGEMM_CBLAS_GEMM(scipy_cblas_dgemm64_, double, int64_t)
#undef VKGEMM_CBLAS_GEMM
