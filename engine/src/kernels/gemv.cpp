// The skinny kernel (shaders/gemv.comp): GEMV and products whose M or N is at most GEMM_GEMV_MAX_SMALL, which
// the memory bounds (docs/design/gemv.md). Every type, every op combination, any product (a wider small side
// runs in blocks of GEMM_GEMV_MAX_SMALL along the grid's y, correct but no faster than the other kernels).
// auto takes it by skinny_first below, before the tuning table and the other kernels.
#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "gemm_abi.h"
#include "kernels/kernel_spec.hpp"
#include "kernels/push_constants.hpp"
#include "kernels/registry.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

constexpr DataType kInputs[] = {DataType::f32,  DataType::i32, DataType::f64, DataType::f16,
                                DataType::bf16, DataType::i8,  DataType::u8};

// auto's rule (docs/design/planner.md, "Skinny products"; docs/design/gemv.md, the measurements): a small side
// of one, the large side and K long enough that streaming the large operand is the product's cost, on a GPU;
// for i8, u8, and f16 and bf16 whose K the device cannot split (no 16-bit arithmetic for their reduce), only
// where the one is C's column count (one row of op(A) streams B faster through coopmat2's tensor loads than one
// slice of K does). With 4 or 16 rows the blocked and matrix kernels reuse each loaded element across them and
// win: auto keeps them there.
constexpr uint32_t kAutoMinLarge = 1024;
constexpr uint32_t kAutoMinK = 256;

// The workgroup: kWorkgroup invocations where the device and the shared memory allow, halved until they do
// (kMinWorkgroup at least); KLANES of them split K for the same rows.
constexpr uint32_t kWorkgroup = 256;
constexpr uint32_t kMinWorkgroup = 32;
// Along k (L's rows contiguous): 32 invocations of 4 elements each cover 128 consecutive k of a row; a K of
// at most kShortK takes kKLanesShortK (fewer lanes idle on short rows).
constexpr uint32_t kKLanesAlongK = 32;
constexpr uint32_t kKLanesShortK = 8;
constexpr uint32_t kShortK = 4 * kKLanesShortK;
// Along r (L's columns contiguous): 16 invocations of 16 bytes each (4 rows of f32, 8 of f16: rows_along_r)
// cover 256 consecutive bytes of a row of L at one k; the rest of the workgroup walks K. Fewer bytes a load
// keep fewer in flight (docs/design/gemv.md, the measurements).
constexpr uint32_t kRLanesAlongR = 16;
constexpr uint32_t kWideRowsMaxSmall = 4;

// K split across workgroups where the rows alone give fewer than kSplitWorkgroups of them (1 x 4096 x 4096
// read along its rows is 64 workgroups of 256 invocations, too few to keep an H200's 132 SMs' loads in
// flight; about 4 a compute unit is the rule: 8, with slices half as long, measured slower on every long case,
// docs/design/gemv.md), into slices of at least kSplitMinK (whole multiples of kSplitAlign: vector loads stay aligned).
// The slices meet in the same pass, no reduce pass after it: each workgroup stores its raw sums to the
// workspace and counts itself done on its C block's counter there, and the last of a block adds the slices
// in their order and stores C through store_c (alpha, beta, the epilogue, C's type): one dispatch, no
// barrier between two. f32 and f64 sum in C's own type; f16 and bf16 in fp32 (the workspace's sums are fp32,
// C the variant's own); the integer types and fp16 sums run one slice.
constexpr uint32_t kSplitWorkgroups = 512;
constexpr uint32_t kSplitMinK = 512;
constexpr uint32_t kSplitAlign = 128;

// The accumulator's bytes (ACC_T: the shader's sums): f64 8, fp16 sums 2, every other type 4.
uint32_t sum_bytes(const Types& types) {
  if (types.input == DataType::f64) return 8;
  return types.f16_accumulate ? 2 : 4;
}

uint32_t shared_bytes(uint32_t workgroup, uint32_t sb, const Types& types) { return workgroup * sb * sum_bytes(types); }

// The largest workgroup (a power of two, kMinWorkgroup to kWorkgroup) whose sums of `sb` columns fit the device.
uint32_t workgroup_for(const DeviceInfo& device, uint32_t sb, const Types& types) {
  uint32_t wg = kWorkgroup;
  while (wg > kMinWorkgroup && (wg > device.max_workgroup_invocations || wg > device.max_workgroup_size[0] ||
                                shared_bytes(wg, sb, types) > device.max_shared_memory)) {
    wg /= 2;
  }
  return wg;
}

// The orientation: the smaller side is the small one (N on a tie: then L is op(A), the classic GEMV).
struct Sides {
  bool small_m;
  uint32_t small, large;
};
Sides sides_of(const Problem& p) {
  const bool small_m = p.m < p.n;
  return {small_m, small_m ? p.m : p.n, small_m ? p.n : p.m};
}

// Whether K may be split across workgroups: the slices' sums in C's own type (f32, f64), or f16's and bf16's
// in fp32 where the device has 16-bit arithmetic and storage (the rule auto's measurements were made under);
// the integer types and fp16 sums run one slice. The slices meet through an atomic counter and buffer
// barriers at Device scope, which a device with vulkanMemoryModel on allows only with
// vulkanMemoryModelDeviceScope on too: without it, one slice.
bool splits_k(const Types& types, const DeviceInfo& device) {
  const bool own_sums = (types.input == DataType::f32 || types.input == DataType::f64) && types.output == types.input;
  const bool fp32_sums = is_half_width_float(types.input) && device.float16 && device.storage16;
  const bool device_scope = !device.vulkan_memory_model || device.vulkan_memory_model_device_scope;
  return (own_sums || fp32_sums) && !types.f16_accumulate && device_scope;
}

// Whether auto's rule takes this product (kAutoMinLarge, kAutoMinK). A row of 16-bit floats that coopmat2's
// 16-row tile takes is left to it: its tensor loads stream B faster than this kernel's (docs/design/gemv.md).
bool skinny(const DeviceInfo& device, const Problem& p) {
  const Sides s = sides_of(p);
  const bool simt_type = p.types.input == DataType::f32 || p.types.input == DataType::f64 ||
                         p.types.input == DataType::i32;
  const bool half = is_half_width_float(p.types.input);
  const bool tile = half && s.small_m && s.small == 1 && coopmat2_skinny_tile(device, p.types, p.m, p.n, p.k, p.batch);
  const bool one_row = simt_type || (half && splits_k(p.types, device) && !tile);
  return device.type != DeviceType::cpu && s.small == 1 && (one_row || !s.small_m) && s.large >= kAutoMinLarge &&
         p.k >= kAutoMinK;
}

std::vector<GemmOptions> candidates(const LaunchContext& ctx, const Problem& p) {
  if (!skinny(ctx.device, p)) return {};
  GemmOptions o = ctx.options;
  o.kernel = Kernel::gemv;
  return {o};
}

// The widest block (GEMM_GEMV_MAX_SMALL columns) with the narrowest workgroup must fit: every product's
// launch then does.
void check(const LaunchContext& ctx) {
  const LaunchShape shape{.shader = shader_name(Kernel::gemv, ctx.types)};
  spirv(shape.shader);
  const uint32_t wg = workgroup_for(ctx.device, GEMM_GEMV_MAX_SMALL, ctx.types);
  check_workgroup(ctx.device, "gemv", {wg, 1, 1}, shared_bytes(wg, GEMM_GEMV_MAX_SMALL, ctx.types), ctx.types.input);
}

// The large operand read a vector at a time: its ld, offset and batch stride multiples of 4 elements, of 8 for
// the 16-bit floats (whose vector is 8 elements: 16 bytes, GEMV_VEC16).
uint32_t vec_flag(const Problem& p, bool small_m) {
  const uint32_t v = is_half_width_float(p.types.input) ? 8 : 4;
  if (small_m) return p.ldb % v == 0 && p.b_offset % v == 0 && p.stride_b % v == 0 ? kVecB : 0u;
  return p.lda % v == 0 && p.a_offset % v == 0 && p.stride_a % v == 0 ? kVecA : 0u;
}

// The pipelines a device builds are few and known: every specialization value is drawn from a small set
// (the block of the small side a power of two, two K-lane counts), never from a product's exact sizes. Each
// pipeline is built once and kept for the engine's life (kernels/pipelines.hpp), so a value that followed
// the sizes would grow the driver's memory with every new shape a program runs.
uint32_t small_block(uint32_t small) { return std::bit_ceil(std::clamp(small, 1u, GEMM_GEMV_MAX_SMALL)); }

// The K slices of a product whose grid (x times y, per batch entry) is `groups` workgroups: Problem::splits
// where the partition fixed it for the pieces, else kSplitWorkgroups' rule; one where the types do not split.
uint32_t splits_for(const Problem& p, uint32_t groups, const Types& types, const DeviceInfo& device) {
  if (!splits_k(types, device) || p.k == 0) return 1;
  if (p.splits) return p.splits;
  const uint64_t wanted = (kSplitWorkgroups + uint64_t{groups} * p.batch - 1) / (uint64_t{groups} * p.batch);
  return static_cast<uint32_t>(std::clamp<uint64_t>(wanted, 1, std::max(1u, p.k / kSplitMinK)));
}

// Rows of L an invocation reads along r: 4 (16 bytes of f32); f16 and bf16 8, one 16-byte load too, where
// the small side is narrow and the wider rows still leave kHalfWave workgroups a compute unit once K is split
// (3 of the 8 of 256 invocations a unit holds keep enough loads in flight: 4 left 16-128 MB matrices on 8-byte
// loads, docs/design/gemv.md); a short R keeps 4, for more workgroups of fewer rows. A piece of a partitioned
// product chooses by its own sides, as its K lanes do.
constexpr uint32_t kHalfWave = 3;
uint32_t rows_along_r(const Problem& p, const Sides& s, uint32_t sb, uint32_t rlanes, const LaunchContext& ctx) {
  if (!is_half_width_float(ctx.types.input) || sb > kWideRowsMaxSmall) return 4;
  const uint64_t groups = (uint64_t{s.large} + rlanes * 8 - 1) / (rlanes * 8);
  const uint64_t slices = splits_k(ctx.types, ctx.device) ? std::max(1u, p.k / kSplitMinK) : 1;
  return groups * slices * p.batch >= uint64_t{kHalfWave} * std::max(1u, ctx.device.compute_units) ? 8 : 4;
}

KernelLaunch launch(const LaunchContext& ctx, const Problem& p) {
  const Sides s = sides_of(p);
  const uint32_t sb = small_block(s.small);
  // L contiguous along r: A^T where N is small, B untransposed where M is.
  const bool r_contig = s.small_m ? !p.trans_b : p.trans_a;
  const uint32_t wg = workgroup_for(ctx.device, sb, ctx.types);
  uint32_t klanes, rpi;
  if (r_contig) {
    rpi = rows_along_r(p, s, sb, std::min(kRLanesAlongR, wg), ctx);
    klanes = wg / std::min(kRLanesAlongR, wg);
  } else {
    // Fewer K lanes on short rows; two rows an invocation where the small side is narrow (more loads in
    // flight for as many sums).
    klanes = std::min(p.k <= kShortK ? kKLanesShortK : kKLanesAlongK, wg);
    rpi = sb <= 4 ? 2 : 1;
  }
  const uint32_t rows = wg / klanes * rpi;
  KernelLaunch out;
  out.kernel = Kernel::gemv;
  out.main.shader = shader_name(Kernel::gemv, ctx.types);
  out.main.constants = {{"WG", wg},          {"SB", sb},         {"SMALL_M", s.small_m ? 1u : 0u},
                        {"R_CONTIG", r_contig ? 1u : 0u}, {"KLANES", klanes}, {"RPI", rpi}};
  out.main.workgroup_size = {wg, 1, 1};
  out.main.shared_bytes = shared_bytes(wg, sb, ctx.types);
  // The C block of a workgroup, columns x rows: rows of L along C's rows where N is small, along its columns
  // where M is.
  out.main.tile = s.small_m ? std::array<uint32_t, 2>{rows, sb} : std::array<uint32_t, 2>{sb, rows};
  out.grid = {(s.large + rows - 1) / rows, (s.small + sb - 1) / sb, p.batch};
  const uint32_t wanted = splits_for(p, out.grid[0] * out.grid[1], ctx.types, ctx.device);  // 1 where K is 0
  out.k_split = std::max(p.k, 1u);
  if (wanted > 1) {  // slices of whole kSplitAlign steps; rounding them up may leave fewer than wanted
    out.k_split = ((p.k + wanted - 1) / wanted + kSplitAlign - 1) / kSplitAlign * kSplitAlign;
    out.splits = (p.k + out.k_split - 1) / out.k_split;
  }
  out.grid[2] = out.splits * p.batch;
  if (out.splits > 1) {  // the slices' sums in the workspace, in the variant's ACC_T: C's type, or fp32
    out.adds_slices = true;
    out.workspace_element_size = sum_bytes(ctx.types);
  }
  out.flags = vec_flag(p, s.small_m);
  out.description = fmt::format("{} small, {} columns in blocks of {}, {} rows x {} K lanes{}{}", s.small_m ? "M" : "N",
                                s.small, sb, rows, klanes, r_contig ? ", along rows" : "",
                                out.splits > 1 ? fmt::format(", K in {} slices", out.splits) : "");
  return out;
}

// Pieces (partition.hpp) plan themselves again (launch above) with the whole product's K slices: nothing else
// is chosen but the workgroup's shape, which follows from the piece's sides.
Pinning pin(const KernelLaunch& whole, const DeviceInfo&, const GemmOptions& options) {
  Pinning out{options, {}, whole.splits};
  out.options.kernel = Kernel::gemv;
  out.blocking.cols = whole.main.tile[0], out.blocking.rows = whole.main.tile[1];
  out.blocking.k_step = whole.splits > 1 ? kSplitAlign : 4;
  out.blocking.z_per_entry = whole.splits;
  out.blocking.adds_slices = whole.adds_slices;
  out.blocking.workspace_element_size = whole.workspace_element_size;
  return out;
}

}  // namespace

const KernelSpec gemv_spec{
    .kernel = Kernel::gemv,
    .inputs = kInputs,
    .computes = "computes every type",
    .reads_transposed = true,
    .auto_fallback = false,
    .from_tuning = nullptr,
    .auto_candidates = candidates,
    .check = check,
    .launch = launch,
    .pin = pin,
};

}  // namespace vkgemm::kernels
