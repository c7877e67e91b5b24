// The SPIR-V of every shader variant, compiled at build time (shaders/CMakeLists.txt) and embedded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vkgemm::kernels {

struct SpirvBlob {
  const char* name;        // "<kernel>_<type>", e.g. "tiled_f32", "coopmat_f16_f32"
  const uint32_t* words;
  std::size_t bytes;
};

std::span<const SpirvBlob> spirv_table();

// Kernels this build could not compile, with why (the glslangValidator it used lacks an extension).
struct MissingKernel {
  const char* kernel;  // "coopmat", "coopmat2"
  const char* reason;
};
std::span<const MissingKernel> spirv_missing();

}  // namespace vkgemm::kernels
