// Every environment variable the drop-in BLAS reads, read here and nowhere else (docs/blas.md lists them;
// the engine's own, VKGEMM_DEVICE among them, are engine/src/engine/environment.cpp's). The rest of the
// library takes its settings from blas_environment().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkgemm::blaslib {

// 1024^3: below it the copies to and from the device cost more than a multithreaded CPU BLAS spends on the
// product (measured on an H200's host against its 16-core OpenBLAS, docs/design/bindings.md).
inline constexpr uint64_t kDefaultThreshold = uint64_t(1) << 30;
inline constexpr uint64_t kNever = ~uint64_t(0);  // VKGEMM_BLAS_THRESHOLD=never

struct BlasEnvironment {
  uint64_t threshold = kDefaultThreshold;  // VKGEMM_BLAS_THRESHOLD: route when m·n·k >= threshold
  int verbose = 0;                         // VKGEMM_BLAS_VERBOSE: 1 a summary at exit; 2 also a line per call
  bool validation = false;                 // VKGEMM_BLAS_VALIDATION=1: the engine under the validation layer
  bool check = false;                      // VKGEMM_BLAS_CHECK=1: each device product checked on the host
  std::string precision = "native";        // VKGEMM_BLAS_PRECISION: the engine's policy (it judges the name)
  std::string cpu_library;                 // VKGEMM_BLAS_CPU: the CPU BLAS to forward to; empty: searched
  // A value not taken, one sentence each: the variable, its value, what it takes and the default used in its
  // place. A preloaded library cannot refuse the program's calls, so a bad setting is reported, not thrown.
  std::vector<std::string> refused;
};

// One line on stderr, "vkgemm-blas: MESSAGE": how the library tells the program's user anything (a refused
// setting, a fallback, its summary's counterpart).
void warn(const std::string& message);

// The settings from the variables `lookup` gives (nullptr: unset); an empty variable counts as unset.
BlasEnvironment parse_blas_environment(const char* (*lookup)(const char* name));

// The process's settings: read from its environment once, at the first call that needs them (never at load
// time: a program may set a variable before its first GEMM); each refused value reported once on stderr.
const BlasEnvironment& blas_environment();

}  // namespace vkgemm::blaslib
