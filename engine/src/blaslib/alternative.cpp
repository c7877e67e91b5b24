// The libblas.so.3 alternative's own part (docs/blas.md): the reference library's data, and the forwarding
// table of every function the drop-in does not implement, filled from the CPU BLAS when the library loads
// (a dlopen of a CPU library: no device work), before any program or library that needs it runs.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "blaslib/cpu_blas.hpp"

extern "C" {
// The reference CBLAS's globals, which its cblas_* routines and cblas_xerbla share (and netlib's CBLAS testers
// set): the CPU BLAS's CBLAS, loaded privately, binds to these (the process's scope comes first).
__attribute__((visibility("default"))) int RowMajorStrg = 0;
__attribute__((visibility("default"))) int CBLAS_CallFromC = 0;

extern const std::size_t vkgemm_forward_count;
extern void* vkgemm_forward_table[];
extern const char* const vkgemm_forward_names[];
}

namespace vkgemm::blaslib {
namespace {

std::string missing_names;

// Where a function no CPU BLAS has is called: the program cannot go on without its result.
[[noreturn]] void missing_function() {
  std::fprintf(stderr, "vkgemm-blas: a BLAS function that no CPU BLAS has was called (none has: %s); set "
               "VKGEMM_BLAS_CPU to a BLAS library's path\n", missing_names.c_str());
  std::abort();
}

__attribute__((constructor)) void fill_forward_table() {
  for (std::size_t i = 0; i < vkgemm_forward_count; ++i) {
    void* address = cpu_symbol(vkgemm_forward_names[i]);
    if (!address) {
      if (!missing_names.empty()) missing_names += ' ';
      missing_names += vkgemm_forward_names[i];
      address = reinterpret_cast<void*>(&missing_function);
    }
    vkgemm_forward_table[i] = address;
  }
}

}  // namespace
}  // namespace vkgemm::blaslib
