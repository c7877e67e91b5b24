// The CPU BLAS underneath the drop-in library: where every call the device does not take goes.
#pragma once

#include <string>

namespace vkgemm::blaslib {

// The address of `name` in the CPU BLAS, never one of this library's own; null when no BLAS found has it.
// Looked up at the first call that needs it (the BLAS of a Python extension is loaded long after this
// library), and kept. The search, in order (docs/blas.md):
//   1. VKGEMM_BLAS_CPU: a path to a BLAS library, opened privately (RTLD_LOCAL);
//   2. every object loaded in the process, in load order (with LD_PRELOAD: the program's own libblas.so.3,
//      or NumPy's bundled OpenBLAS);
//   3. Debian's alternatives of libblas.so.3, as update-alternatives would rank them (OpenBLAS, BLIS,
//      ATLAS, the reference), opened privately.
// An object that resolves the name to this library (itself, or a copy of it under another name) is passed over.
void* cpu_symbol(const char* name);

// Where `name` was found ("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"), or "nowhere": for messages.
std::string cpu_library_of(const char* name);

}  // namespace vkgemm::blaslib
