// The kernel registry: for each kernel, its SPIR-V per type, what a configuration asks of the device,
// its specialization constants and its dispatch grid. Adding a kernel means adding an entry here.
//
// Ranking for `--kernel auto` (fastest first, each where check_supported passes): f16 inputs:
// coopmat2, coopmat, tiled, naive. Other types: tiled, naive.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vkgemm/device_info.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::kernels {

// The element types of one product: A and B of `input`, C of `output`; f16_accumulate for f16 sums.
struct Types {
  DataType input = DataType::f32;
  DataType output = DataType::f32;
  bool f16_accumulate = false;
};

struct SpecConstant {
  uint32_t id;
  uint32_t value;
};

struct LaunchShape {
  std::vector<SpecConstant> constants;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  std::array<uint32_t, 2> tile{0, 0};  // columns x rows of C per workgroup; 0: the workgroup size
  uint32_t shared_bytes = 0;
  uint32_t required_subgroup_size = 0;  // nonzero: the pipeline requires it, with full subgroups
};

// The name of the shader variant (as shaders/CMakeLists.txt names it), e.g. "tiled_f32", "coopmat_f16_f16".
std::string variant_name(Kernel kernel, const Types& types);

// The SPIR-V for a kernel and types; throws vkgemm::Error when this build has no such variant, saying why.
std::span<const uint32_t> spirv(Kernel kernel, const Types& types);

// What a configuration asks for, for an m x n x k product (the cooperative-matrix kernels choose their
// tiles by shape and by what the device lists); throws vkgemm::Error for a malformed or impossible one.
LaunchShape launch_shape(const DeviceInfo& device, Kernel kernel, const Types& types, const GemmOptions& options,
                         uint32_t m, uint32_t n, uint32_t k);

// Throws vkgemm::Error naming the limit or the missing feature when the device cannot run this.
void check_supported(const DeviceInfo& device, Kernel kernel, const Types& types, const GemmOptions& options);

// Workgroups to cover an m x n result; throws vkgemm::Error(too_large) past maxComputeWorkGroupCount.
std::array<uint32_t, 3> dispatch_grid(const DeviceInfo& device, const LaunchShape& shape, uint32_t m, uint32_t n);

// The cooperative-matrix kernels' choices (coopmat_config.cpp).
bool is_matrix_kernel(Kernel kernel) noexcept;
LaunchShape coopmat_launch(const DeviceInfo& device, const Types& types, const GemmOptions& options, uint32_t m,
                           uint32_t n);
LaunchShape coopmat2_launch(const DeviceInfo& device, const Types& types, const GemmOptions& options, uint32_t m,
                            uint32_t n);
// Throws unless the device has what the kernel needs (extension, features, a shape for these types).
void check_matrix_kernel(const DeviceInfo& device, Kernel kernel, const Types& types);

}  // namespace vkgemm::kernels
