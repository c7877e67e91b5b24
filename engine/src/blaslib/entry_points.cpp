// The drop-in BLAS's exported GEMMs: the Fortran interface (sgemm_, dgemm_), CBLAS (cblas_sgemm,
// cblas_dgemm), the ILP64 CBLAS names NumPy's wheels call in their bundled OpenBLAS (cblas_sgemm64_,
// scipy_cblas_sgemm64_, and the d ones), MKL's strided batches and the 16-bit float routines with C in f32
// (MKL's, OpenBLAS's). Each checks its arguments as the reference BLAS does, returns where the reference
// returns at once, offers the product to the device (route.hpp), and otherwise calls the same routine of the
// CPU BLAS (cpu_blas.hpp), or the library's loops where no CPU BLAS has it.
// Illegal arguments: the Fortran entry points call xerbla_ with the reference's routine name and parameter
// number (sgemm.f's checks, in its order), found at run time (the program's own where it has one, as the
// netlib testers do); the CBLAS entry points hand the whole call to the CPU BLAS's CBLAS, which reports it its
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
template <class T, class I, class In = T>
using CblasGemm = void (*)(int, int, int, I, I, I, T, const In*, I, const In*, I, T, T*, I);
template <class T, class I>
using CblasBatchStrided = void (*)(int, int, int, I, I, I, T, const T*, I, I, const T*, I, I, T, T*, I, I, I);
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

// The column-major product a CBLAS call describes: row-major C = op(A) op(B) is column-major C^T = op(B)^T
// op(A)^T, the reference CBLAS's own swap. False when the layout or a transpose is no CBLAS value.
template <class T, class In, class I>
bool column_major(int layout, int trans_a, int trans_b, I m, I n, I k, T alpha, const In* a, I lda, const In* b, I ldb,
                  T beta, T* c, I ldc, ColumnMajorGemm<T, In>& g) {
  bool ta = false, tb = false;
  if ((layout != kRowMajor && layout != kColMajor) || !trans_of(trans_a, ta) || !trans_of(trans_b, tb)) return false;
  g = layout == kRowMajor ? ColumnMajorGemm<T, In>{tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc}
                          : ColumnMajorGemm<T, In>{ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
  return true;
}

template <class T, class In>
int reference_info_of(const ColumnMajorGemm<T, In>& g) {
  return reference_info<int64_t>(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', g.m, g.n, g.k, g.lda, g.ldb, g.ldc);
}

template <class T, class I, class In = T>
void cblas_gemm(const char* name, int layout, int trans_a, int trans_b, I m, I n, I k, T alpha, const In* a, I lda,
                const In* b, I ldb, T beta, T* c, I ldc) {
  auto cpu = reinterpret_cast<CblasGemm<T, I, In>>(cpu_symbol(name));
  ColumnMajorGemm<T, In> g;
  const bool legal = column_major(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, g);
  if (!legal || reference_info_of(g) != 0) {
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

// MKL's strided batch: C_i = alpha op(A_i) op(B_i) + beta C_i, X_i stride_x elements after X_{i-1}. Without a
// CPU BLAS that has it, the entries go one by one to the CPU BLAS's single GEMM (never to this library's,
// which would offer each to the device again), else to the loops.
template <class T, class I>
void cblas_gemm_batch_strided(const char* name, const char* single, int layout, int trans_a, int trans_b, I m, I n,
                              I k, T alpha, const T* a, I lda, I stride_a, const T* b, I ldb, I stride_b, T beta, T* c,
                              I ldc, I stride_c, I batch) {
  auto cpu = reinterpret_cast<CblasBatchStrided<T, I>>(cpu_symbol(name));
  const auto all_on_cpu = [&] {
    cpu(layout, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, batch);
  };
  ColumnMajorGemm<T> g;
  const bool legal = column_major(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, g) &&
                     batch >= 0 && stride_a >= 0 && stride_b >= 0 && stride_c >= 0;
  g.batch = batch;
  g.stride_a = layout == kRowMajor ? stride_b : stride_a;
  g.stride_b = layout == kRowMajor ? stride_a : stride_b;
  g.stride_c = stride_c;
  if (!legal || reference_info_of(g) != 0) {
    if (cpu) {
      all_on_cpu();
    } else {
      std::fprintf(stderr, "vkgemm-blas: %s was called with an illegal argument\n", name);
    }
    return;
  }
  if (batch == 0 || quick_return(m, n, k, alpha, beta)) return;
  if (run_on_device(g, name)) return;
  count_cpu_call(name);
  if (cpu) return all_on_cpu();
  if (auto one = reinterpret_cast<CblasGemm<T, I>>(cpu_symbol(single))) {
    for (I e = 0; e < batch; ++e)
      one(layout, trans_a, trans_b, m, n, k, alpha, a + e * stride_a, lda, b + e * stride_b, ldb, beta, c + e * stride_c, ldc);
    return;
  }
  report_missing_cpu(name);
  loop_gemm(g);
}

}  // namespace
}  // namespace vkgemm::blaslib

using vkgemm::blaslib::BFloat16;
using vkgemm::blaslib::cblas_gemm;
using vkgemm::blaslib::cblas_gemm_batch_strided;
using vkgemm::blaslib::fortran_gemm;
using vkgemm::blaslib::Half;

// The library's engine for vkgemm's PDGEMM (libvkgemm_pblas, which finds this by name) to multiply a product of
// `work` = m·n·k: null where this library would keep it on the CPU BLAS. Not a BLAS routine; no header
// declares it.
VKGEMM_BLAS_EXPORT vkgemm_engine* vkgemm_blas_engine(double work) { return vkgemm::blaslib::shared_engine(work); }

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

// MKL's strided batches (LP64).
#define VKGEMM_CBLAS_BATCH_STRIDED(symbol, single, T)                                                              \
  VKGEMM_BLAS_EXPORT void symbol(int layout, int ta, int tb, int m, int n, int k, T alpha, const T* a, int lda,    \
                                 int stride_a, const T* b, int ldb, int stride_b, T beta, T* c, int ldc,          \
                                 int stride_c, int batch) {                                                       \
    cblas_gemm_batch_strided<T, int>(#symbol, #single, layout, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, \
                                     stride_b, beta, c, ldc, stride_c, batch);                                    \
  }
VKGEMM_CBLAS_BATCH_STRIDED(cblas_sgemm_batch_strided, cblas_sgemm, float)
VKGEMM_CBLAS_BATCH_STRIDED(cblas_dgemm_batch_strided, cblas_dgemm, double)
#undef VKGEMM_CBLAS_BATCH_STRIDED

// 16-bit float inputs with C in f32 (bit patterns, as the libraries declare them: MKL_BF16, MKL_F16 and
// OpenBLAS's bfloat16 are 16-bit integers): MKL's cblas_gemm_bf16bf16f32 and cblas_gemm_f16f16f32, OpenBLAS's
// cblas_sbgemm.
#define VKGEMM_CBLAS_HALF_GEMM(symbol, In)                                                                         \
  VKGEMM_BLAS_EXPORT void symbol(int layout, int ta, int tb, int m, int n, int k, float alpha, const uint16_t* a, \
                                 int lda, const uint16_t* b, int ldb, float beta, float* c, int ldc) {            \
    cblas_gemm<float, int, In>(#symbol, layout, ta, tb, m, n, k, alpha, reinterpret_cast<const In*>(a), lda,      \
                               reinterpret_cast<const In*>(b), ldb, beta, c, ldc);                               \
  }
VKGEMM_CBLAS_HALF_GEMM(cblas_gemm_bf16bf16f32, BFloat16)
VKGEMM_CBLAS_HALF_GEMM(cblas_sbgemm, BFloat16)
VKGEMM_CBLAS_HALF_GEMM(cblas_gemm_f16f16f32, Half)
#undef VKGEMM_CBLAS_HALF_GEMM
