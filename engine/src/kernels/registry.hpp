// The kernel registry: the launch of one pass (LaunchShape) and one product's passes (KernelLaunch), and plan(),
// which turns a product and the caller's options into them, resolving `auto` and unchosen configurations
// through the tuning table. Each kernel is described once, by its spec (kernel_spec.hpp); plan() loops over
// the specs.
//
// `auto` takes the tuning table's kernel where it names tiled, else for f32 and f64 a square kernel where the
// blocked kernel's tiles would be mostly padding (square_choice.hpp: tiny and batched products), else the
// first kernel of the table (in the order coopmat2, coopmat, blocked, tiled, naive) that can run: for f16
// inputs the cooperative-matrix kernels where the device has them, for f32 and f64 blocked, else tiled at
// the largest tile that fits.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tuning/tuning_table.hpp"
#include "vkgemm/blas.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/options.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::kernels {

// The element types of one product: A and B of `input`, C of `output`; f16_accumulate for f16 sums.
// A single DataType means that input with its default output (default_output_type) and fp32 sums.
struct Types {
  DataType input = DataType::f32;
  DataType output = DataType::f32;
  bool f16_accumulate = false;

  Types() = default;
  Types(DataType type) : input(type), output(default_output_type(type)) {}  // NOLINT: implicit on purpose
  Types(DataType in, DataType out, bool f16_acc) : input(in), output(out), f16_accumulate(f16_acc) {}
};

// The types of one BLAS call: A and B of desc.type, C of output_type(desc), fp16 sums as the options say.
inline Types types_of(const GemmDesc& desc, const GemmOptions& options) {
  return {desc.type, output_type(desc), options.f16_accumulate};
}

// A specialization constant by the name its shader declares it under (`layout(constant_id = N) const uint
// BM`): the pipeline finds N in the shader's SPIR-V (specialization_id), so the id is written once, in the
// shader.
struct SpecConstant {
  std::string_view name;  // a literal
  uint32_t value;
};

// One compute pass: which shader, specialized how, launched how.
struct LaunchShape {
  std::string shader;  // a name in the embedded SPIR-V table: "blocked_f32", "tiled_f16_f32", "coopmat_f16_acc16"
  std::vector<SpecConstant> constants;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  std::array<uint32_t, 2> tile{0, 0};   // columns x rows of C per workgroup; 0: the workgroup size
  uint32_t shared_bytes = 0;
  uint32_t required_subgroup_size = 0;  // nonzero: the pipeline requires it, with full subgroups
};

// The product as the kernels see it: types, sizes, row strides and offsets inside the bindings, in elements.
struct Problem {
  Types types;
  uint32_t m = 0, n = 0, k = 0;
  uint32_t lda = 0, ldb = 0, ldc = 0;
  uint32_t a_offset = 0, b_offset = 0, c_offset = 0;
  bool trans_a = false, trans_b = false;       // op(A) = A^T, op(B) = B^T
  uint32_t stride_a = 0, stride_b = 0, stride_c = 0;  // between batch entries, in elements
  uint32_t batch = 1;
  bool beta_zero = false;  // C is not read (the piece's beta is 0)
  bool transcendental_epilogue = false;  // its fused activation needs exp (detail::transcendental): auto weighs it
  uint32_t splits = 0;  // coopmat2: split-K slices as planned for the whole product (0: choose), so that
                        // its pieces (partition.hpp) split as the partition assumed
};

struct KernelLaunch {
  Kernel kernel = Kernel::naive;      // never automatic
  LaunchShape main;
  std::array<uint32_t, 3> grid{};
  uint32_t splits = 1;                // > 1: main writes partial sums to a workspace (slice-major per
                                      // batch entry, m x n each), which `reduce` adds into C, or the main
                                      // pass itself (adds_slices)
  uint32_t k_split = 0;               // the K range of one slice
  LaunchShape reduce;                 // with a shader where the sums go through the workspace: splits > 1,
                                      // or a C the main pass cannot store (coopmat2's bf16 C read for beta)
  uint32_t workspace_element_size = 0;  // bytes of one workspace sum (add_reduce, or the main pass's own)
  bool adds_slices = false;           // splits > 1 and no reduce pass: the main pass adds its K slices itself,
                                      // their sums and a counter a C block in the workspace (binding 4;
                                      // the skinny kernel, shaders/gemv.comp)
  std::array<uint32_t, 3> reduce_grid{};
  std::string description;            // "tile 16", "128x128x8 8x8 lanes 8 split 1", "128x128"
  uint32_t flags = 0;                 // GEMM_VEC_* for the main pass
  BlockedConfig blocked;              // blocked: the configuration chosen (split_k as asked), so that the
                                      // pieces of a partitioned product can be planned with the same one
  bool through_workspace() const { return !reduce.shader.empty(); }
};

// The shader variant of a kernel for these types (as shaders/CMakeLists.txt names it): "<kernel>_<type>"
// for f32, i32, f64; "<kernel>_f16_<f32|f16|acc16>" for f16 inputs, and "<kernel>_f16_acc16_f32" for fp16
// sums written as f32 (coopmat2's split-K partial sums).
std::string shader_name(Kernel kernel, const Types& types);

// The SPIR-V of a shader variant; throws vkgemm::Error when this build has none of that name (saying why,
// where configure found the compiler unable to build it).
std::span<const uint32_t> spirv(const std::string& shader);
// The id the shader variant gives its specialization constant `name`, read from its SPIR-V (the constant's
// name and SpecId decoration); throws vkgemm::Error naming both when it declares no such constant.
uint32_t specialization_id(const std::string& shader, std::string_view name);

// Throws vkgemm::Error naming the limit or the missing feature when the device cannot run this kernel,
// configuration or type. An unchosen blocked configuration is checked as the engine would choose it for a
// mid-sized product. options.f16_accumulate counts as types.f16_accumulate.
void check_supported(const DeviceInfo& device, const tuning::Table& table, const Types& types,
                     const GemmOptions& options);

// The passes for one product (m, n > 0; k > 0 except for an f16 C the fill cannot zero): check_supported,
// then plan_supported. Throws vkgemm::Error when nothing requested can run.
KernelLaunch plan(const DeviceInfo& device, const tuning::Table& table, const GemmOptions& options, const Problem& problem);
// The same for options that passed check_supported already (auto's candidates are still tried).
KernelLaunch plan_supported(const DeviceInfo& device, const tuning::Table& table, const GemmOptions& options,
                    const Problem& problem);

// "naive, tiled, blocked, coopmat, coopmat2": every kernel, for messages.
std::string kernel_list();

// The configuration vkgemm uses for the blocked kernel when no tuning entry applies: safe everywhere
// Vulkan's minimum limits hold (128 invocations, 16 KiB of shared memory).
BlockedConfig fallback_blocked_config(DataType type);

// Throws vkgemm::Error (invalid_argument or unsupported_config, naming the rule or the limit) unless the
// blocked kernel can run `config` for `type` on `device`.
void check_blocked_config(const DeviceInfo& device, DataType type, const BlockedConfig& config);
// The same rules, not counted as a check of a call (check_count.hpp): the tuning table's entries filtered by
// what fits the device. check_blocked_rules throws as check_blocked_config; blocked_config_fits says whether.
void check_blocked_rules(const DeviceInfo& device, DataType type, const BlockedConfig& config);
bool blocked_config_fits(const DeviceInfo& device, DataType type, const BlockedConfig& config) noexcept;

// Workgroups to cover an m x n result; throws vkgemm::Error(too_large) past maxComputeWorkGroupCount.
std::array<uint32_t, 3> dispatch_grid(const DeviceInfo& device, const LaunchShape& shape, uint32_t m, uint32_t n);

// The cooperative-matrix kernels' choices (coopmat_config.cpp); the shapes they return name no shader.
bool is_matrix_kernel(Kernel kernel) noexcept;
// The KHR kernel's tile: options.tile, or (16) by shape: the small tile where the large one gives too few
// workgroups (batch entries count), else the wide one where the wave model expects it first, else the large.
LaunchShape coopmat_launch(const DeviceInfo& device, const Types& types, const GemmOptions& options, uint32_t m,
                           uint32_t n, uint32_t k, uint32_t batch);
// coopmat2's tile: options.tile, or (16) by shape: 32 x 64 for at most 32 rows, 64 x 64 for fewer than 128
// rows or columns, else the wave model's among the modelled tiles where one fills the device unsplit, else
// the largest that fills it split along K where k (the product's K) allows; batch entries count as
// workgroups.
LaunchShape coopmat2_launch(const DeviceInfo& device, const Types& types, const GemmOptions& options, uint32_t m,
                            uint32_t n, uint32_t k = 0, uint32_t batch = 1);
// The largest launch the options let a product choose, planning none: for the checks that hold for every
// product (the specs' check).
LaunchShape coopmat_largest_launch(const DeviceInfo& device, const Types& types, const GemmOptions& options);
LaunchShape coopmat2_largest_launch(const DeviceInfo& device, const Types& types, const GemmOptions& options);
// The KHR matrices' fragment shape (the largest usable one the device lists for the types) and the subgroup
// size its pipelines require, for `kernel` (the thin kernel's; the coopmat kernel derives its tiles from the
// same): throws naming what the device lacks.
struct KhrFragment {
  uint32_t tm, tn, tk, sg;
};
KhrFragment khr_fragment(const DeviceInfo& device, Kernel kernel, const Types& types);
// Split-K slices for a coopmat2 launch (1: none): short grids with a long K are cut along K, the partial
// sums (of either accumulator type) going through an fp32 workspace and splitk_reduce.
uint32_t coopmat2_splits(const LaunchShape& shape, uint32_t m, uint32_t n, uint32_t k, uint32_t batch);
// Whether coopmat2 may split these types along K: f16 and bf16 (an fp32 workspace and splitk_reduce_f16_* or
// splitk_reduce_bf16_bf16). i8 and u8 run one slice.
bool coopmat2_splittable(const Types& types) noexcept;
// Whether auto takes coopmat2 for bf16 inputs with C bf16 (main: its launch for the product, with `splits`;
// through_workspace: C goes through the fp32 workspace rather than out of the main pass; trans_b: B is read
// transposed; k: the product's K).
bool coopmat2_first_for_bf16_c(const LaunchShape& main, uint32_t splits, bool through_workspace, bool trans_b,
                               uint32_t k);
// The GemmOptions::tile that names coopmat2's bm x bn tile (32 for 32 x 64, 64, 96 for 96 x 192, 128, 192 for
// 192 x 128, 256 for 128 x 256 or, with fp16 sums, 256 x 256); a tile only the experiment knob makes, by its
// longer side.
uint32_t coopmat2_tile_option(uint32_t bm, uint32_t bn);
// Whether coopmat2 takes a product of m rows (at most 16) on its 16-row tile: f16 or bf16 with fp32 sums, where
// it splits K (coopmat_config.cpp's rule) and the device lists the tile's shape.
bool coopmat2_skinny_tile(const DeviceInfo& device, const Types& types, uint32_t m, uint32_t n, uint32_t k,
                          uint32_t batch);
// The turn of an 8-bit B (turn_b.cpp): whether the product `p` (planned as `whole`) copies B N x K into the
// workspace first; the problem the product then is (op(B) = W^T: TRANS_B, ldb K rounded up to 16, offset 0);
// the turn's pass for `p` (its launch, grid and the workspace it fills; its push constants are the
// schedule's).
struct TurnB {
  LaunchShape shape;
  std::array<uint32_t, 3> grid{};
  uint64_t workspace_bytes = 0;
};
bool turns_b(const KernelLaunch& whole, const Problem& p, const DeviceInfo& device);
Problem turned_b(const Problem& p);
TurnB turn_b_pass(const Problem& p);
// Throws unless the device has what the kernel needs (extension, features, a shape for these types).
void check_matrix_kernel(const DeviceInfo& device, Kernel kernel, const Types& types);

}  // namespace vkgemm::kernels
