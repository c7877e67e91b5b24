// The kernel registry: what each kernel is made of (its SPIR-V per type, its specialization constants,
// what a configuration asks of the device, its dispatch grid), and plan(), which turns a product and the
// caller's options into the passes to record, resolving `auto` and unchosen configurations through the
// tuning table. Adding a kernel means adding it here.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tuning/tuning_table.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::kernels {

struct SpecConstant {
  uint32_t id;
  uint32_t value;
};

// One compute pass: which shader, specialized how, launched how.
struct LaunchShape {
  std::string shader;  // "<kernel>_<type>", a name in the embedded SPIR-V table
  std::vector<SpecConstant> constants;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  uint32_t shared_bytes = 0;
};

// The product as the kernels see it: sizes, row strides and offsets inside the bindings, in elements.
struct Problem {
  DataType type = DataType::f32;
  uint32_t m = 0, n = 0, k = 0;
  uint32_t lda = 0, ldb = 0, ldc = 0;
  uint32_t a_offset = 0, b_offset = 0, c_offset = 0;
  bool trans_a = false, trans_b = false;       // op(A) = A^T, op(B) = B^T
  uint32_t stride_a = 0, stride_b = 0, stride_c = 0;  // between batch entries, in elements
  uint32_t batch = 1;
};

struct Plan {
  Kernel kernel = Kernel::naive;      // never automatic
  LaunchShape main;
  std::array<uint32_t, 3> grid{};
  uint32_t splits = 1;                // > 1: main writes partial sums to a workspace (slice-major per
                                      // batch entry, m x n each), `reduce` adds them into C
  uint32_t k_split = 0;               // the K range of one slice
  LaunchShape reduce;
  std::array<uint32_t, 3> reduce_grid{};
  std::string description;            // "tile 16", "128x128x8 8x8 lanes 8 split 1"
  uint32_t flags = 0;                 // GEMM_VEC_* for the main pass
  BlockedConfig blocked;              // blocked: the configuration chosen (split_k as asked), so that the
                                      // pieces of a partitioned product can be planned with the same one
};

// The SPIR-V of a shader variant; throws vkgemm::Error when this build has none of that name.
std::span<const uint32_t> spirv(const std::string& shader);

// Throws vkgemm::Error naming the limit when the device cannot run this kernel, configuration or type.
// An unchosen blocked configuration is checked as the engine would choose it for a mid-sized product.
void check_supported(const DeviceInfo& device, const tuning::Table& table, DataType type, const GemmOptions& options);

// The passes for one product (m, n, k > 0). Throws vkgemm::Error when nothing requested can run.
Plan plan(const DeviceInfo& device, const tuning::Table& table, const GemmOptions& options, const Problem& problem);

// The configuration vkgemm uses for the blocked kernel when no tuning entry applies: safe everywhere
// Vulkan's minimum limits hold (128 invocations, 16 KiB of shared memory).
BlockedConfig fallback_blocked_config(DataType type);

// Throws vkgemm::Error (invalid_argument or unsupported_config, naming the rule or the limit) unless the
// blocked kernel can run `config` for `type` on `device`.
void check_blocked_config(const DeviceInfo& device, DataType type, const BlockedConfig& config);

}  // namespace vkgemm::kernels
