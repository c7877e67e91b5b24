// A device that returns a wrong result, for the drop-in BLAS's check (VKGEMM_BLAS_CHECK=1) to catch: preloaded
// before libvkgemm_blas, this vkgemm_gemm stands in for the C ABI's, calls it, and then moves one element of an
// f32 or f64 C far off (its middle element: 2c + 1000). Tests alone (tests/blas/test_entry_points.py).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "vkgemm/vkgemm.h"

namespace {

using Gemm = vkgemm_status (*)(vkgemm_engine*, const vkgemm_gemm_desc*, const void*, const void*, void*,
                               const vkgemm_gemm_options*, vkgemm_timing*);

// The C ABI's own vkgemm_gemm: libvkgemm_c is loaded by then, as the BLAS library's dependency.
Gemm real_gemm() {
  static const Gemm real = [] {
    void* lib = dlopen("libvkgemm_c.so.0", RTLD_NOW | RTLD_NOLOAD);
    void* sym = lib ? dlsym(lib, "vkgemm_gemm") : nullptr;
    if (!sym) {
      std::fprintf(stderr, "wrong_result: no vkgemm_gemm in a loaded libvkgemm_c.so.0\n");
      std::abort();
    }
    return reinterpret_cast<Gemm>(sym);
  }();
  return real;
}

template <class T>
void move_off(void* c, int64_t at) {
  T& x = static_cast<T*>(c)[at];
  x = 2 * x + 1000;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) vkgemm_status vkgemm_gemm(
    vkgemm_engine* engine, const vkgemm_gemm_desc* d, const void* a, const void* b, void* c,
    const vkgemm_gemm_options* options, vkgemm_timing* timing) {
  const vkgemm_status status = real_gemm()(engine, d, a, b, c, options, timing);
  if (status != VKGEMM_OK || d->m == 0 || d->n == 0) return status;
  const bool f32 = d->c_type == VKGEMM_F32 || (d->c_type == -1 && d->type == VKGEMM_F32);
  const bool f64 = d->c_type == -1 && d->type == VKGEMM_F64;
  const int64_t ld = d->ldc ? d->ldc : (d->column_major ? d->m : d->n);
  const int64_t at = d->column_major ? d->m / 2 + ld * (d->n / 2) : d->n / 2 + ld * (d->m / 2);
  if (f32) move_off<float>(c, at);
  if (f64) move_off<double>(c, at);
  return status;
}
