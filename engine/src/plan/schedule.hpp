// A product's schedule: one admitted BLAS GEMM call turned into everything its recording needs, with no
// Vulkan: the column-major turn, the kernel's launch for the whole product (kernels::plan_supported over the
// kernel table), the pieces within the device's limits (partition.hpp), each piece's passes with their push
// constants, and the workspace (split-K sums, a turned 8-bit B). A GemmPlan (engine/gemm_plan.cpp) records a Schedule; statistics
// reads its pipelines; tests call schedule_product directly.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/push_constants.hpp"
#include "kernels/registry.hpp"
#include "kernels/partition.hpp"
#include "tuning/tuning_table.hpp"
#include "vkgemm/blas.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/options.hpp"

namespace vkgemm::detail {

// A and B are read only when there is something to multiply: alpha = 0 or k = 0 makes C = beta C.
inline bool reads_ab(const GemmDesc& desc) noexcept { return desc.alpha != 0.0 && desc.k != 0; }

// Where the caller's operands start, in bytes into their buffers, and the alignment the device binds them
// at (minStorageBufferOffsetAlignment).
struct Placement {
  uint64_t a = 0, b = 0, c = 0;
  uint64_t bias = 0;  // the epilogue's bias vector (GemmDesc::epilogue), where it has one
  uint64_t alignment = 1;
};

// Where the epilogue's bias is bound (binding 3): from its start rounded down to this many bytes (the
// device's binding alignment, and at least 8 so that the shader's 32-bit words hold whole elements); the
// shader finds its first element bias_offset elements in. Source 4 of a recording's bindings (engine_impl.hpp).
uint64_t bias_binding_alignment(uint64_t device_alignment) noexcept;

// The push constants' epilogue words (gemm_abi.h) of a pass whose C block starts at row m0, column n0 of the
// row-major problem; zero where desc has no epilogue. `turned`: the column-major turn swapped rows and columns.
void put_epilogue(kernels::GemmPushConstants& push, const GemmDesc& desc, bool turned, uint32_t m0, uint32_t n0,
                  const Placement& placement);
// The push constants' dequantization words (gemm_abi.h GEMM_SCALE_*) of such a pass, on every K chunk; zero
// where desc has no per_column scale (the per-tensor one is folded into alpha).
void put_scale(kernels::GemmPushConstants& push, const GemmDesc& desc, bool turned, uint32_t m0, uint32_t n0,
               const Placement& placement);

// One compute pass: the pipeline to bind (its launch shape), the grid and the push constants.
struct Pass {
  kernels::LaunchShape shape;
  std::array<uint32_t, 3> grid{};
  kernels::GemmPushConstants push{};
};

// One piece of the product: its bindings into the caller's buffers (Piece::a, b, c, already turned and
// substituted as Schedule::source says), its main pass and, with split-K, its reduce pass through the
// workspace (the main pass then writes the workspace in place of C, the reduce pass reads it as A and B);
// or, where an 8-bit B is turned (kernels/turn_b.cpp), the turn before the main pass (it reads B and
// writes the workspace as C; the main pass then reads the workspace as B).
struct PiecePasses {
  Piece piece;
  Pass main;
  std::optional<Pass> reduce;
  std::optional<Pass> turn_b;
  uint64_t workspace_bytes = 0;  // what this piece's split or turn needs of the shared workspace
  bool adds_slices = false;      // the main pass adds its K slices itself (KernelLaunch::adds_slices): it binds
                                 // C as C and the workspace at binding 4, whose counters start at zero
};

// One pass of a product recorded as a sequence rather than as pieces (the emulated product:
// plan/emulated_schedule.hpp). Each binding names its source itself — the caller's operand (0 A, 1 B, 2 C,
// after the column-major turn's swap), the workspace (3) or the sums' workspace (5) — and its range in bytes; an
// indirect pass takes its grid from the workspace, `indirect` bytes in (a VkDispatchIndirectCommand an earlier
// pass wrote).
inline constexpr uint32_t kSequenceWorkspace = 3;  // SequenceBinding::source: the plan's workspace
inline constexpr uint32_t kSequenceSums = 5;       // SequenceBinding::source: the plan's second workspace
struct SequenceBinding {
  uint32_t source = kSequenceWorkspace;
  uint64_t offset = 0, size = 0;
};
struct SequencePass {
  Pass pass;
  std::array<SequenceBinding, 3> bindings{};
  std::optional<uint64_t> indirect;
  std::optional<SequenceBinding> slices;  // binding 4 where the pass adds its K slices (PiecePasses::adds_slices)
};

struct Schedule {
  kernels::Types types;
  // Which of the caller's operands (0 A, 1 B, 2 C) each binding reads: {1, 0, 2} after the column-major
  // turn, {2, 2, 2} when A and B are not read (C is bound in their place, where nothing reads it).
  std::array<uint32_t, 3> source{0, 1, 2};
  kernels::KernelLaunch whole;              // the kernel and configuration, planned for the whole product
  std::vector<PiecePasses> pieces;    // empty: nothing to do (m, n or batch 0)
  uint64_t workspace_bytes = 0;     // split-K or the turn of B: the largest any piece needs (the pieces run
                                    // in turn)
  // A second workspace, an allocation of its own: the emulated product's int32 planes, which on their own
  // fit where they would not beside its other regions (a device's maxMemoryAllocationSize). 0: none.
  uint64_t sums_bytes = 0;
  // The emulated product (Kernel::ozaki): its passes in order, recorded instead of the pieces' (which are
  // then the native kernel's plan of the same product, its fallback, whose dispatches are in the sequence
  // too). Or a 16-bit C whose K chunks sum in fp32 in the workspace (schedule.cpp, sums_chunks_in_fp32): the
  // pieces' passes bound there, and the passes that round each C block. Empty for every other product.
  std::vector<SequencePass> sequence;
  Kernel kernel = Kernel::automatic;  // what runs (auto resolved)
  std::string config;               // its configuration, and the count of pieces when there are several
  // The emulated product: its native fallback's kernel and configuration (what ran where the coverage flag
  // was set), and the first int32 of the workspace, the flag.
  Kernel fallback_kernel = Kernel::automatic;
  std::string fallback_config;
  // The emulated product's candidate moduli counts, the first the default: the span guard's refusal of each is
  // an int32 of the workspace (ozaki_abi.h's OZAKI_REFUSED_WORD on). Empty for every other product.
  std::vector<uint32_t> candidate_moduli;
  // Whether a pass adds its K slices through counters in the workspace: they must read zero before the first
  // call (the plan zeroes its workspace once; each call leaves them at zero).
  bool counts_in_workspace() const;
};

// The whole plan of one call admitted at the engine's door (engine/src/engine/door.cpp: check_gemm, the run
// options, kernels::check_supported), which it trusts and does not check again; an empty product's plan
// has no piece. Throws vkgemm::Error only where the product meets a limit (partition, the grid).
Schedule schedule_product(const GemmDesc& desc, const GemmOptions& options, const DeviceInfo& device,
                         const tuning::Table& tuning, const Placement& placement = {});

// The launch shapes of the pipelines a recording of `product` binds (engine/gemm_plan.cpp, lay_out), in
// dispatch order: the emulated product's sequence where it has one (its fallback's passes among them), else
// each piece's turn of B, main pass and reduce pass. Engine::prepare builds these, so that the recording
// finds every one built.
std::vector<const kernels::LaunchShape*> pipeline_shapes(const Schedule& product);

// Throws Error(too_large) when the memory of `desc` cannot be on `device`: A, B and C as desc spans them
// (batch, leading dimensions, strides; A and B only where read), then the workspace of its plan
// under `options`, each against maxMemoryAllocationSize and all together against the device-local memory.
// The message names each size and the device. The operands are checked before the product is planned, so
// an absurd one is refused at once; with no `tuning` the product is not planned and only the operands are
// checked (gemm on host memory, whose plan is made or found in the cache after). desc passed the door.
void check_fits(const GemmDesc& desc, const GemmOptions& options, const DeviceInfo& device,
                const tuning::Table* tuning);

}  // namespace vkgemm::detail
