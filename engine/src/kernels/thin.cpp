// The thin kernel (shaders/thin.comp): a long op(A) against a small op(B) on the KHR cooperative matrices, B held
// in registers while blocks of A's rows stream past it (docs/design/thin.md). f16 and bf16 inputs with fp32 sums.
// auto takes it by its rule below, before coopmat2.
#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "kernels/kernel_spec.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

constexpr DataType kInputs[] = {DataType::f16, DataType::bf16};

// A workgroup is kSubgroups subgroups, each a strip of row_fragments() fragments' rows a block: two for a
// 4-byte C, whose stores are the larger part of the stream, one for a 2-byte C (docs/design/thin.md).
constexpr uint32_t kSubgroups = 4;
uint32_t row_fragments(const Types& t) { return element_size(t.output) == 4 ? 2 : 1; }
// The fragments of a workgroup's block of B (KF x NF) it holds in registers: at most kMaxHeldFragments (16 of
// 16 x 16 f16 are 64 registers an invocation on NVIDIA), beside the strip's fragments of A and C. Where holding
// them would cut N into more blocks than kMaxAccumulators fragments of C a strip allow, B's fragments are read
// from shared memory at each use instead (HOLD_B 0): each block of columns reads all of op(A) again, which
// costs the stream more than shared memory's reads cost the multiplies (docs/design/thin.md).
constexpr uint32_t kMaxHeldFragments = 16;
constexpr uint32_t kMaxAccumulators = 8;
// Workgroups a compute unit: enough to keep loads in flight while others multiply and store; each loads its
// block of B once. Where the device does not say how many units it has, kUnknownUnits.
constexpr uint32_t kWorkgroupsPerUnit = 4;
constexpr uint32_t kUnknownUnits = 128;

// The next block's strip of A loaded before this block's multiplies and stores (shaders/thin.comp PREFETCH):
// twice the bytes in flight a subgroup, for KF more fragments of registers.
constexpr uint32_t kPrefetch = 1;

// auto's rule (docs/design/thin.md, the measurements): op(A) = A (its strips move in 16-byte loads), K of at
// most kAutoMaxK, N of at most kAutoMaxN and in one workgroup's block of columns (op(A) read once), at least
// kAutoMinRows rows (fewer: coopmat2 was faster on the H200), fp32 sums, on a GPU; with a transcendental
// activation fused, at most kAutoMaxTranscendentalFragments fragments of columns or (not for a bf16 C) a block
// without padding.
constexpr uint32_t kAutoMaxK = 128;
constexpr uint32_t kAutoMaxN = 128;
constexpr uint32_t kAutoMinRows = 1u << 18;
// With a transcendental activation fused, blocks of at most this many fragments of columns, or wider blocks
// without padding fragments for a C other than bf16: past them the activation costs more than reading op(A)
// once saves (docs/design/thin.md has the measurements).
constexpr uint32_t kAutoMaxTranscendentalFragments = 4;

struct Shape {
  KhrFragment f;
  uint32_t kf, nf;     // fragments along K, and along N a workgroup
  bool hold_b = true;  // B's fragments in registers (else from shared memory at each use)
};

// Shared memory (shaders/thin.comp): B's block, each subgroup's area for its strip of A, then of C in C's type
// (16-byte units, rows one unit longer than the data; a bf16 C has none), and one fragment of fp32 sums a
// subgroup, through which a bf16 C and the element-by-element stores go out.
uint32_t shared_bytes(const Shape& s, const Types& t) {
  constexpr uint32_t unit = 16;
  const uint32_t kp = s.kf * s.f.tk, np = s.nf * s.f.tn;
  const uint32_t c_unit = unit / static_cast<uint32_t>(element_size(t.output));
  const uint32_t rows = row_fragments(t) * s.f.tm;  // a strip's
  const uint32_t c_strip = t.output == DataType::bf16 ? 1 : rows * (np / c_unit + 1);
  const uint32_t b = kp * (np / 8 + 1), strips = kSubgroups * std::max(rows * (kp / 8 + 1), c_strip);
  return (b + strips) * unit + kSubgroups * s.f.tm * s.f.tn * 4;
}

// The fragments for a K (at least one) and the block of N's fragments: a power of two, the fewest that cover N
// (padding fragments' multiplies cost less than streaming op(A) once more), else the widest that the budget of
// B's fragments (or, past it, of C's) and the device's shared memory leave (at least one: max_k says which K
// fits).
Shape shape_for(const DeviceInfo& device, const Types& types, uint32_t k, uint32_t n) {
  Shape s{khr_fragment(device, Kernel::thin, types), 0, 0};
  s.kf = std::max(1u, (k + s.f.tk - 1) / s.f.tk);
  // A power of two: a program's many widths build few pipelines (each is kept for the engine's life).
  const uint32_t columns = (n + s.f.tn - 1) / s.f.tn;
  const auto widest = [&](uint32_t budget) {  // the widest block within a budget of fragments and shared memory
    Shape w = s;
    w.nf = std::min(std::bit_ceil(columns), std::bit_floor(std::max(1u, budget)));
    while (w.nf > 1 && shared_bytes(w, types) > device.max_shared_memory) w.nf /= 2;
    return w.nf;
  };
  s.nf = widest(kMaxHeldFragments / s.kf);
  const uint32_t unheld = widest(kMaxAccumulators / row_fragments(types));
  if (unheld > s.nf) s.nf = unheld, s.hold_b = false;
  return s;
}

// The largest K the kernel takes on this device: every fragment of B in registers (kMaxHeldFragments) and
// shared memory enough for a block's strips of it.
uint32_t max_k(const DeviceInfo& device, const Types& types) {
  const KhrFragment f = khr_fragment(device, Kernel::thin, types);
  uint32_t kf = kMaxHeldFragments;
  while (kf > 1 && shared_bytes({f, kf, 1}, types) > device.max_shared_memory) --kf;
  return kf * f.tk;
}

void check_types(const LaunchContext& ctx) {
  if (ctx.types.f16_accumulate) {
    throw Error(ErrorCode::unsupported_config,
                "the thin kernel sums in fp32; it has no fp16 sums (f16_accumulate): ask for the coopmat kernel");
  }
}

// Whatever K a product has, the kernel needs the device's fragments and its shape for one fragment of K.
void check(const LaunchContext& ctx) {
  check_types(ctx);
  const Shape s = shape_for(ctx.device, ctx.types, 1, 1);
  spirv(shader_name(Kernel::thin, ctx.types));
  check_workgroup(ctx.device, "thin", {kSubgroups * s.f.sg, 1, 1}, shared_bytes(s, ctx.types), ctx.types.input);
}

std::vector<GemmOptions> candidates(const LaunchContext& ctx, const Problem& p) {
  const bool shape = !p.trans_a && p.k > 0 && p.k <= kAutoMaxK && p.n <= kAutoMaxN && p.m >= kAutoMinRows;
  if (!shape || ctx.device.type == DeviceType::cpu || ctx.types.f16_accumulate || !ctx.device.coopmat_khr) return {};
  try {
    check(ctx);
  } catch (const Error&) {
    return {};
  }
  const Shape s = shape_for(ctx.device, ctx.types, p.k, p.n);
  if (s.nf * s.f.tn < p.n) return {};  // more than one block of columns: op(A) streamed again for each
  // A bf16 C's fragments go out one at a time through the subgroup's fp32 area: wide blocks lose there too.
  const bool padded = s.nf * s.f.tn > p.n, bf16_c = ctx.types.output == DataType::bf16;
  if (p.transcendental_epilogue && s.nf > kAutoMaxTranscendentalFragments && (padded || bf16_c)) return {};
  GemmOptions o = ctx.options;
  o.kernel = Kernel::thin;
  return {o};
}

KernelLaunch launch(const LaunchContext& ctx, const Problem& p) {
  check_types(ctx);
  if (p.k > max_k(ctx.device, ctx.types)) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the thin kernel holds all of op(B)'s K in registers: K = {} is past its {} on {}; the "
                            "coopmat or coopmat2 kernel takes any K",
                            p.k, max_k(ctx.device, ctx.types), ctx.device.name));
  }
  const Shape s = shape_for(ctx.device, ctx.types, p.k, p.n);
  const uint32_t unit = 8;  // 16 bytes of 16-bit elements: the matrix loads' alignment
  const bool direct_a = !p.trans_a && p.k > 0 && p.k % s.f.tk == 0 && p.lda % unit == 0 && p.a_offset % unit == 0 &&
                        (p.batch == 1 || p.stride_a % unit == 0);
  KernelLaunch out;
  out.kernel = Kernel::thin;
  out.main.shader = shader_name(Kernel::thin, ctx.types);
  const uint32_t wg = kSubgroups * s.f.sg;
  out.main.constants = {{"WG", wg},       {"TM", s.f.tm}, {"TN", s.f.tn}, {"TK", s.f.tk}, {"SG", s.f.sg},
                        {"KF", s.kf},     {"NF", s.nf},   {"DIRECT_A", direct_a ? 1u : 0u},
                        {"PREFETCH", kPrefetch},
                        {"C_BYTES", static_cast<uint32_t>(element_size(ctx.types.output))},
                        {"RF", row_fragments(ctx.types)},
                        {"HOLD_B", s.hold_b ? 1u : 0u}};
  out.main.workgroup_size = {wg, 1, 1};
  out.main.required_subgroup_size = ctx.device.subgroup_size_control ? s.f.sg : 0;
  out.main.shared_bytes = shared_bytes(s, ctx.types);
  const uint32_t rows = kSubgroups * row_fragments(ctx.types) * s.f.tm, cols = s.nf * s.f.tn;
  out.main.tile = {cols, rows};
  const uint32_t blocks = std::max(1u, (p.m + rows - 1) / rows);
  const uint32_t units = ctx.device.compute_units ? ctx.device.compute_units : kUnknownUnits;
  const uint32_t col_blocks = (p.n + cols - 1) / cols;
  const uint64_t wanted = std::max<uint64_t>(1, uint64_t{units} * kWorkgroupsPerUnit / (uint64_t{col_blocks} * p.batch));
  out.grid = {static_cast<uint32_t>(std::min<uint64_t>(blocks, wanted)), col_blocks, p.batch};
  out.k_split = std::max(p.k, 1u);
  out.description = fmt::format("{} rows a block, {} x {} fragments of B {}, A {}", rows, s.kf, s.nf,
                                s.hold_b ? "held" : "read from shared memory at each use",
                                direct_a ? "in 16-byte loads" : "element by element");
  return out;
}

// Pieces keep the whole product's kernel; each plans its own shape (its K and N are the whole product's).
Pinning pin(const KernelLaunch& whole, const DeviceInfo&, const GemmOptions& options) {
  Pinning out{options, {}, 0};
  out.options.kernel = Kernel::thin;
  out.blocking.cols = whole.main.tile[0], out.blocking.rows = whole.main.tile[1];
  out.blocking.k_step = 16;
  return out;
}

}  // namespace

const KernelSpec thin_spec{
    .kernel = Kernel::thin,
    .inputs = kInputs,
    .computes = "multiplies f16 and bf16 matrices with fp32 sums",
    .reads_transposed = true,
    .auto_fallback = false,
    .from_tuning = nullptr,
    .auto_candidates = candidates,
    .check = check,
    .launch = launch,
    .pin = pin,
};

}  // namespace vkgemm::kernels
