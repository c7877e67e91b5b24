// The SPIR-V of every shader variant, compiled at build time (shaders/CMakeLists.txt) and embedded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vkgemm::kernels {

struct SpirvBlob {
  const char* name;        // "<kernel>_<type>", e.g. "tiled_f32"
  const uint32_t* words;
  std::size_t bytes;
};

std::span<const SpirvBlob> spirv_table();

}  // namespace vkgemm::kernels
