// One description per kernel: everything the engine knows about a kernel, in one KernelSpec per kernel
// family (naive.cpp, tiled.cpp, blocked.cpp, coopmat.cpp, coopmat2.cpp in this folder). The registry
// (registry.cpp) only loops over the table: names, checks, `auto` and planning all come from here.
//
// Adding a kernel: its shader (shaders/<name>.comp, its specialization-constant ids in shaders/gemm_abi.h),
// one vkgemm_shader_variant line in shaders/CMakeLists.txt, one spec file here (engine/CMakeLists.txt builds
// every file of this folder), one entry in vkgemm/kernel_list.hpp, which makes its vkgemm::Kernel
// enumerator too (docs/architecture.md).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vkgemm/kernel_list.hpp"
#include "kernels/registry.hpp"
#include "kernels/partition.hpp"

namespace vkgemm::kernels {

// What a spec plans with: the device, its tuning table, the options (with the kernel, tile or blocked
// configuration already resolved for planning) and the product's types with f16 accumulation folded in.
struct LaunchContext {
  const DeviceInfo& device;
  const tuning::Table& table;
  const GemmOptions& options;
  const Types& types;
};

// How the pieces of a partitioned product are held to the plan of the whole (kernels/partition.hpp).
struct Pinning {
  GemmOptions options;            // the whole product's kernel and configuration, fixed for every piece
  detail::Blocking blocking;      // how its workgroups cover C, which sizes the pieces
  uint32_t splits = 0;            // Problem::splits for every piece (0: each piece chooses)
};

struct KernelSpec {
  Kernel kernel;
  std::span<const DataType> inputs;        // the types of A and B it computes
  std::string_view computes;               // "computes f32 and f64": for the error naming a type it lacks
  bool reads_transposed;                   // takes op(A) = A^T and op(B) = B^T
  bool auto_fallback;                      // auto's last resort: when no candidate runs, the first refusal
                                           // of these is the error

  // auto: the tuning table's entry for the nearest shape, when it names this kernel and the spec takes
  // the entry's configuration as a choice of its own (nullptr: the spec reads the table itself, if at all).
  std::optional<GemmOptions> (*from_tuning)(const LaunchContext& ctx, const tuning::Entry& entry);
  // auto: the options to try for this kernel on this problem, best first (empty: not a candidate).
  std::vector<GemmOptions> (*auto_candidates)(const LaunchContext& ctx, const Problem& problem);
  // Throws vkgemm::Error naming the limit or feature when the device cannot run ctx.options, for any
  // product (what a product's shape may choose fits wherever the options pass: no product is planned to
  // find out). The types are checked already.
  void (*check)(const LaunchContext& ctx);
  // The passes for one problem with ctx.options (checked): launch shape, grid, split-K, description.
  KernelLaunch (*launch)(const LaunchContext& ctx, const Problem& problem);
  // The pieces of a product cut to the device's limits keep the whole product's plan.
  Pinning (*pin)(const KernelLaunch& whole, const DeviceInfo& device, const GemmOptions& options);
};

// Every kernel, in kernel_list.hpp's order: auto's order of preference.
std::span<const KernelSpec* const> kernel_specs() noexcept;
// The spec of a kernel; nullptr for Kernel::automatic or a value vkgemm does not define.
const KernelSpec* find_spec(Kernel kernel) noexcept;

// The passes for one piece of a product cut to the device's limits, held to the whole product's plan by
// `pinning` (KernelSpec::pin); nothing is chosen or checked again but the grid against the device's limits.
KernelLaunch plan_piece(const DeviceInfo& device, const tuning::Table& table, const Pinning& pinning, const Problem& piece);

// Each kernel's spec, defined in its own file (<name>.cpp), one for each entry of kernel_list.hpp.
#define VKGEMM_KERNEL_SPEC_DECLARATION(name, value) extern const KernelSpec name##_spec;
VKGEMM_KERNELS(VKGEMM_KERNEL_SPEC_DECLARATION)
#undef VKGEMM_KERNEL_SPEC_DECLARATION

// ---- helpers the specs share (registry.cpp) ----

// Throws unless the device has the types (check_types) and `spec` computes them.
void check_types_for(const DeviceInfo& device, const KernelSpec& spec, const Types& types);

// Throws Error(unsupported_config) when a workgroup of `wg` invocations using `shared_bytes` of shared
// memory does not fit the device; `what` names the kernel and configuration.
void check_workgroup(const DeviceInfo& device, const std::string& what, const std::array<uint32_t, 3>& wg,
                     uint32_t shared_bytes, DataType type);
// The naive and tiled kernels: a square workgroup of t x t, one invocation per element of C.
LaunchShape square_shape(const DeviceInfo& device, Kernel kernel, const Types& types, uint32_t t);
// The tiled kernel's i8 and u8 through packed dot products (shaders/tiled.comp TILED_DOT8; its variants are
// named with this suffix): where the device has shaderIntegerDotProduct and this build the variant.
inline constexpr const char* kDot8Suffix = "_dot";
bool tiled_dot8(const DeviceInfo& device, Kernel kernel, const Types& types);
void check_square(const LaunchContext& ctx);
KernelLaunch square_launch(const LaunchContext& ctx, const Problem& problem);
Pinning square_pin(const KernelLaunch& whole, const DeviceInfo& device, const GemmOptions& options);
// The cooperative-matrix kernels as auto's candidates: f16, bf16, i8 and u8 products with something to sum,
// tile chosen by shape. (k = 0, an f16 C the fill cannot zero, takes tiled, whose empty sum every device's tests
// cover.)
std::vector<GemmOptions> matrix_candidates(const LaunchContext& ctx, const Problem& problem, Kernel kernel);
// The cooperative-matrix kernels: `shape` (the largest the options allow) needs what the device and build have.
void check_matrix(const LaunchContext& ctx, const LaunchShape& shape);
// Their single-pass plan with `main`: a grid over its tile, one K slice.
KernelLaunch matrix_plan(const LaunchContext& ctx, const Problem& problem, LaunchShape main);
Pinning matrix_pin(const KernelLaunch& whole, const DeviceInfo& device, const GemmOptions& options);
// The split-K reduce pass (shaders/splitk_reduce.comp) for `shader`, over an m x n C of `batch` entries, whose
// workspace holds sums of workspace_element_size bytes.
void add_reduce(KernelLaunch& plan, std::string shader, uint32_t m, uint32_t n, uint32_t batch,
                uint32_t workspace_element_size);
// The reduce pass of a 16-bit float product whose K slices sum in fp32 (coopmat2's split, the skinny kernel's):
// it rounds them into C's type (splitk_reduce_f16_f16, _f16_f32, which serves bf16 inputs with C f32 too, and
// _bf16_bf16); kFp32SumBytes a sum.
std::string fp32_sums_reduce(const Types& types);
inline constexpr uint32_t kFp32SumBytes = 4;
// A pinned product's reduce pass as the partition sizes its pieces by (its block, the workspace's sums), where
// the whole product goes through the workspace (add_reduce); nothing otherwise.
void pin_reduce(detail::Blocking& blocking, const KernelLaunch& whole);

}  // namespace vkgemm::kernels
