// The cooperative-matrix kernels' side of the registry: what they need of a device, and the tile, fragment
// and workgroup each product gets (shaders/coopmat.comp, shaders/coopmat2.comp).
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "kernels/experiments.hpp"
#include "gemm_abi.h"
#include "kernels/registry.hpp"
#include "tuning/wave_model.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

// One workgroup tile of the NV coopmat2 kernel (64, 128 and 256 are the sizes llama.cpp's Vulkan backend
// uses with it).
struct Nv2Tile {
  uint32_t invocations, bm, bn, bk;
  // The wave model's figures for the tile (tuning/wave_model.hpp), both measured in one run on the device
  // the built-in figures describe (docs/design/coopmat2.md): TFLOP/s of a 4096^3 product (C f16, fp32 sums),
  // the rate the model is calibrated by, waves and all; and the tile's fixed cost (first loads, the store of
  // C) in K steps, the one that makes the model give the time measured at 4096^2 x 512 as well. 0: not
  // modelled.
  double measured_tflops = 0.0;
  uint32_t k_overhead = 0;
  uint32_t prefetch = 0;  // software pipelining (shaders/coopmat2.comp PREFETCH)
  // K steps per iteration of the fast loop (shaders/coopmat2.comp UNROLL): a straight run of steps is what
  // lets the driver overlap loads with the tensor-core work (docs/design/coopmat2.md).
  uint32_t unroll = 8;
  // The K step with 8-bit A and B: twice bk (the same bytes a step as the 16-bit types'; an int8 fragment is
  // 32 deep) on every tile where that measured faster (docs/design/coopmat2.md#int8).
  uint32_t bk8 = 2 * bk;
};
// 16 steps at fp32 sums, a few percent faster than 8.
constexpr Nv2Tile kNv2Large{.invocations = 256, .bm = 128, .bn = 256, .bk = 64, .measured_tflops = 286.8,
                            .k_overhead = 542, .unroll = 16};
// With fp16 sums the accumulator takes half the registers, and a 256 x 256 tile fits; unrolled, not
// software-pipelined (the unrolled loop is faster). Not measured beside the others: never modelled.
constexpr Nv2Tile kNv2LargeAcc16{.invocations = 256, .bm = 256, .bn = 256, .bk = 32};
// 192 rows x 128 columns, on 128x256's K step and unrolling: more waves' worth of tiles where 128x256 leaves
// compute units idle (docs/design/coopmat2.md).
constexpr Nv2Tile kNv2Tall{.invocations = 256, .bm = 192, .bn = 128, .bk = 64, .measured_tflops = 274.9,
                           .k_overhead = 441, .unroll = 16};
// 96 rows x 192 columns: 128 tiles at 1536^3, where 192x128 gives 96: one fuller wave on a device of about
// 128 compute units (docs/design/coopmat2.md).
constexpr Nv2Tile kNv2Wide{.invocations = 256, .bm = 96, .bn = 192, .bk = 64, .measured_tflops = 249.2,
                           .k_overhead = 511, .unroll = 16, .bk8 = 64};
constexpr Nv2Tile kNv2Medium{.invocations = 256, .bm = 128, .bn = 128, .bk = 64, .measured_tflops = 256.8,
                             .k_overhead = 227};
// Not modelled: where the model had it level with 128x128 it ran slower (docs/design/coopmat2.md); chosen for
// products narrower than 128 x 128 and where the larger tiles do not fill the device (chosen_tile).
constexpr Nv2Tile kNv2Small{.invocations = 128, .bm = 64, .bn = 64, .bk = 64};
// 32 rows x 64 columns for products of at most 32 rows, where the 64 x 64 tile's only row of tiles lies
// half outside C and so takes the general path's clamped loop (docs/design/coopmat2.md). Not modelled:
// chosen by its rows.
constexpr Nv2Tile kNv2Thin{.invocations = 128, .bm = 32, .bn = 64, .bk = 64};
// 256 rows x 64 columns for long products exactly 64 wide (a network layer over every pixel of a frame): a
// quarter of 64x64's tiles, each loading B once and paying the prologue and store once for four times the
// rows. 128 invocations, as 64x64 (two workgroups to an SM). Its K loop unrolled 16 steps: with 8, the driver
// compiles the same launch into a slower one, even at one K step (docs/design/coopmat2.md). Not modelled:
// chosen by its columns and rows.
constexpr Nv2Tile kNv2Narrow{.invocations = 128, .bm = 256, .bn = 64, .bk = 64, .unroll = 16};
// 16 rows x 64 columns at 64 invocations for products of at most 16 rows (a matrix times a few vectors) in
// f16 and bf16 with fp32 sums: reading B once is their cost, and half of the 32 x 64 tile's rows are padding.
// Taken only where it splits K (K at least 4096, fewer tiles than kSkinnyWorkgroups), as measured: its main
// pass then stores raw fp32 sums, and the reduce pass applies beta, the epilogue and C's type. At 128 or 256
// invocations a 16-row workgroup matrix computes zeros on NVIDIA's driver 580; at 32 and 64 it is right, 64
// the faster (docs/design/coopmat2.md). Its K loop unrolled 4 steps: the long rows' slices stream B faster
// than at 8 (the default), 16 is slower everywhere (docs/design/gemv.md). Not modelled: chosen by its rows.
constexpr Nv2Tile kNv2Skinny{.invocations = 64, .bm = 16, .bn = 64, .bk = 64, .unroll = 4};
// Its workgroups split to 4 a compute unit of a large GPU (16 x 4096 x 4096: 8 slices of 512; 16 x 16384 x 4096:
// 2 of 2048), slices at least kSkinnyMinSlice deep, up to kThinMaxSlices.
constexpr uint64_t kSkinnyWorkgroups = 4 * 128;
constexpr uint32_t kSkinnyMinSlice = 512;
// Its workgroups of 128 invocations run two to an SM: it splits to twice kEnoughWorkgroups (4 slices of
// 32 x 4096 x 8192 beat 2 by 1.54x and 8 by 1.07x).
constexpr uint64_t kThinWorkgroups = 2 * 128;
// Its products (at most 32 rows against n x k) are bound by reading B once, not by the matrix units: slices
// as short as kThinMinSlice still pay for themselves, up to kThinMaxSlices of them.
constexpr uint32_t kThinMinSlice = 1024;
constexpr uint32_t kThinMaxSlices = 8;
// A bf16 C stored by coopmat2's 128x128 or 192x128 tile with K up to this goes to the KHR kernel, whose store
// is faster there; from K 1024 coopmat2's 192x128 measured ahead (docs/design/coopmat2.md).
constexpr uint32_t kKhrBf16LightK = 768;

const char* acc_name(const Types& t) { return t.f16_accumulate ? "f16" : "f32"; }

// The shape a product needs, in DeviceInfo's spelling: f16 * f16 + f32 (or f16 sums); bf16 * bf16 + f32;
// int8 sums in 32-bit integers of its own signedness (i8 * i8 + i32, u8 * u8 + u32: the shapes devices list).
struct ShapeTypes {
  const char *ab, *acc;
};
ShapeTypes shape_types(const Types& t) {
  if (t.input == DataType::i8) return {"i8", "i32"};
  if (t.input == DataType::u8) return {"u8", "u32"};
  if (t.input == DataType::bf16) return {"bf16", "f32"};
  return {"f16", acc_name(t)};
}

bool is_int8(const Types& t) { return t.input == DataType::i8 || t.input == DataType::u8; }

// Bytes of one element of A and B in shared memory and in the shaders' 16-byte chunks. Every tile rule
// below is written in these bytes, so bf16, two bytes as f16, gets f16's tiles from its own shapes (the
// same K step, skew, chunks and shared memory), and int8 twice the elements per chunk.
uint32_t element_bytes(const Types& t) { return is_int8(t) ? 1 : 2; }

bool types_match(const CooperativeMatrixShape& s, const Types& t) {
  const ShapeTypes w = shape_types(t);
  return s.a_type == w.ab && s.b_type == w.ab && s.c_type == w.acc && s.result_type == w.acc && !s.saturating;
}

uint64_t tiles(uint32_t m, uint32_t n, uint32_t bm, uint32_t bn) {
  return ((uint64_t{m} + bm - 1) / bm) * ((uint64_t{n} + bn - 1) / bn);
}

// Enough workgroups to keep a large GPU busy (an H100/H200 has 132 multiprocessors): prefer the largest
// tile that still gives this many, since larger tiles reuse each loaded element more often.
constexpr uint64_t kEnoughWorkgroups = 128;

bool fits(const CooperativeMatrixShape& s, uint32_t invocations, const Nv2Tile& tile) {
  return (s.workgroup_invocations == 0 || s.workgroup_invocations == invocations) && s.m && s.n && s.k &&
         tile.bm % s.m == 0 && tile.bn % s.n == 0 && tile.bk % s.k == 0;
}

std::optional<CooperativeMatrixShape> nv2_shape(const DeviceInfo& d, const Types& t, const Nv2Tile& tile) {
  for (const auto& s : d.coopmat2_shapes) {
    if (s.scope == "workgroup" && types_match(s, t) && fits(s, tile.invocations, tile)) {
      return s;
    }
  }
  return std::nullopt;
}

std::string shapes_wanted(const Types& t) {
  const ShapeTypes w = shape_types(t);
  return fmt::format("{} x {} + {} -> {}", w.ab, w.ab, w.acc, w.acc);
}

void check_common(const DeviceInfo& d, const char* kernel, const Types& t) {
  if (!d.vulkan_memory_model) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the {} kernel needs the vulkanMemoryModel feature, which {} does not have", kernel, d.name));
  }
  if (is_int8(t) && !d.int8) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the {} kernel multiplies {} on 8-bit cooperative matrices, which need the shaderInt8 "
                            "feature; {} does not have it (the tiled kernel runs {} there)",
                            kernel, to_string(t.input), d.name, to_string(t.input)));
  }
  // A dequantized f16 C (an int8 product's fp32 values into f16): an f16 matrix, which needs shaderFloat16.
  if (is_int8(t) && t.output == DataType::f16 && !d.float16) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the {} kernel stores a dequantized f16 C through f16 matrices, which need the "
                            "shaderFloat16 feature; {} does not have it (ask for C f32)", kernel, d.name));
  }
  // bf16 matrices: VK_KHR_shader_bfloat16's shaderBFloat16CooperativeMatrix (and shaderBFloat16Type); the
  // SPIR-V glslang makes of bfloat16_t declares Float16 as well, hence shaderFloat16.
  if (t.input == DataType::bf16 && (!d.bfloat16_coopmat || !d.float16)) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the {} kernel multiplies bf16 on bf16 cooperative matrices, which need the {} feature "
                            "(VK_KHR_shader_bfloat16); {} does not have it (the tiled kernel runs bf16 there)",
                            kernel, d.bfloat16_coopmat ? "shaderFloat16" : "shaderBFloat16CooperativeMatrix", d.name));
  }
}

// ---- The KHR kernel (shaders/coopmat.comp): its configuration, derived from the device ----

// One configuration of the KHR kernel: the fragment shape, the subgroup size, the workgroup tile (BM x BN of
// C, BK along K per step), the warp tile (WM x WN per subgroup), the fast loop's unrolling, the buffers.
struct KhrConfig {
  uint32_t tm = 0, tn = 0, tk = 0, sg = 0;
  uint32_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0;
  uint32_t unroll = 4;   // K steps per fast-loop iteration
  uint32_t buffers = 2;  // double-buffered shared memory
  uint32_t group = 1;
  uint32_t subgroups() const { return (bm / wm) * (bn / wn); }
};

std::string describe_shapes(const std::vector<CooperativeMatrixShape>& shapes) {
  std::string out;
  for (const auto& s : shapes) {
    out += fmt::format("{}{}x{}x{} {}*{}+{}->{} {}{}", out.empty() ? "" : ", ", s.m, s.n, s.k, s.a_type, s.b_type,
                       s.c_type, s.result_type, s.scope, s.saturating ? " saturating" : "");
  }
  return out.empty() ? "none" : out;
}

// The kernel addresses shared memory in units of GEMM_COOPMAT_UNIT elements: every side a multiple of it.
bool khr_usable(const CooperativeMatrixShape& s, const Types& t) {
  constexpr uint32_t unit = GEMM_COOPMAT_UNIT;
  return s.scope == "subgroup" && types_match(s, t) && s.m && s.n && s.k && s.m % unit == 0 && s.n % unit == 0 &&
         s.k % unit == 0 && s.m <= 64 && s.n <= 64 && s.k <= 64;
}

// The fragment shape: the largest usable one the device lists (16x16x16 before 16x8x16 before 8x8x8), or
// the experiment's. Throws naming what the device lists when none is usable.
CooperativeMatrixShape khr_shape(const DeviceInfo& d, const Types& t, const KhrExperiment& e) {
  std::optional<CooperativeMatrixShape> best;
  for (const auto& s : d.coopmat_shapes) {
    if (!khr_usable(s, t)) continue;
    if (e.tm && (s.m != e.tm || s.n != e.tn || s.k != e.tk)) continue;
    if (!best || s.m * s.n * s.k > best->m * best->n * best->k) best = s;
  }
  if (!best) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the coopmat kernel needs a subgroup-scope cooperative matrix shape {}{} with sides that "
                            "are multiples of {} (up to 64); {} lists {}",
                            shapes_wanted(t), e.tm ? fmt::format(" of {}x{}x{} (VKGEMM_EXPERIMENT_COOPMAT shape=)",
                                                                 e.tm, e.tn, e.tk)
                                                   : "",
                            GEMM_COOPMAT_UNIT, d.name,
                            d.coopmat_shapes.empty() ? "none" : describe_shapes(d.coopmat_shapes)));
  }
  return *best;
}

// The subgroup size the pipeline requires: the device's own (its default, which its coopmat shapes are
// listed for), or the experiment's, within what subgroup size control offers.
uint32_t khr_subgroup(const DeviceInfo& d, const KhrExperiment& e) {
  const uint32_t sg = e.sg ? e.sg : d.subgroup_size;
  const bool pow2 = sg != 0 && (sg & (sg - 1)) == 0;
  const bool offered = d.subgroup_size_control ? sg >= d.min_subgroup_size && sg <= d.max_subgroup_size
                                               : sg == d.subgroup_size;
  if (!pow2 || !offered || sg > 128) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the coopmat kernel cannot run subgroups of {}{} on {}: it offers {} (subgroupSize {}{})",
                            sg, e.sg ? " (VKGEMM_EXPERIMENT_COOPMAT sg=)" : "", d.name,
                            d.subgroup_size_control ? fmt::format("{} to {} through subgroupSizeControl",
                                                                  d.min_subgroup_size, d.max_subgroup_size)
                                                    : "only its own, without subgroupSizeControl",
                            d.subgroup_size, pow2 ? "" : "; a power of two is needed"));
  }
  return sg;
}

uint32_t floor_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

// Shared memory of a configuration: the A and B tiles (rows 16 bytes longer than the data, in whichever
// stored order is larger: transposed operands are staged as they lie) per buffer, and one fragment of C
// per subgroup in the accumulator's type.
uint32_t khr_shared_bytes(const KhrConfig& c, const Types& t) {
  const uint32_t e = element_bytes(t), skew = 16 / e;
  const uint32_t a = std::max(c.bm * (c.bk + skew), c.bk * (c.bm + skew));
  const uint32_t b = std::max(c.bk * (c.bn + skew), c.bn * (c.bk + skew));
  return c.buffers * (a + b) * e + c.subgroups() * c.tm * c.tn * (t.f16_accumulate ? 2u : 4u);
}

// A configuration with `subgroups_wanted` subgroups (8: the large tile, 4: the small one). The warp tile
// holds about 64 accumulator elements per invocation (a 64x32 warp tile of 16x16 fragments at subgroup 32,
// 64x64 at subgroup 64), half that for the small tile; the subgroups stand 2 high.
// A CPU device (lavapipe) emulates the matrices lane by lane, and its compile time grows with every
// multiply in the code (a 32x32 tile with 4 fragments per subgroup, 32 deep, unrolled 4 steps, took 100 s
// to build on lavapipe 26): there the K step is one fragment deep, UNROLL 2, and the warp tile 2x2
// fragments (large) or 1x2 (small): 1 to 3 s each.
KhrConfig khr_derive(const DeviceInfo& d, const Types& t, uint32_t subgroups_wanted) {
  const KhrExperiment& e = khr_experiment();
  const CooperativeMatrixShape s = khr_shape(d, t, e);
  const bool cpu = d.type == DeviceType::cpu;
  KhrConfig c;
  c.tm = s.m, c.tn = s.n, c.tk = s.k;
  c.sg = khr_subgroup(d, e);
  const uint32_t subgroups = std::max(1u, std::min(subgroups_wanted, floor_pow2(d.max_workgroup_invocations / c.sg)));
  const uint32_t per_lane = cpu ? 4 * c.tm * c.tn / c.sg : 64;  // accumulator elements, large tile
  const uint32_t fragments = std::max(1u, floor_pow2(per_lane * c.sg / (c.tm * c.tn)) / (subgroups_wanted >= 8 ? 1 : 2));
  uint32_t fn = 1;
  while (fn * fn * 4 <= fragments) fn *= 2;  // fm = fn or 2 fn
  uint32_t fm = fragments / fn;
  // The CPU's small tile: 1x2 fragments, so that it is 16x32 at 8x8 (a tile named 16 would read as the
  // default, options.tile = 16).
  if (cpu && subgroups_wanted < 8) std::swap(fm, fn);
  c.wm = e.wm ? e.wm : fm * c.tm;
  c.wn = e.wn ? e.wn : fn * c.tn;
  const uint32_t high = subgroups >= 2 ? 2 : 1;
  c.bm = e.bm ? e.bm : c.wm * high;
  c.bn = e.bn ? e.bn : c.wn * (subgroups / high);
  // One 16-byte chunk per row on a CPU, four on a GPU (32 f16 or bf16, 64 int8).
  const uint32_t chunk = 16 / element_bytes(t);
  c.bk = e.bk ? e.bk : cpu ? std::max(chunk, c.tk) : std::max(4 * chunk, c.tk);
  c.unroll = e.unroll ? e.unroll : cpu ? 2 : 4;
  if (e.group) c.group = e.group;
  c.buffers = e.buffers ? e.buffers : 2;
  if (!e.buffers && khr_shared_bytes(c, t) > d.max_shared_memory) c.buffers = 1;  // single-buffered where 2 do not fit
  return c;
}

// Throws naming the rule when a configuration (an experiment's) cannot be run by the shader: tiles staged in
// 16-byte chunks (8 f16 or bf16, 16 int8) of whole rows.
void khr_check(const KhrConfig& c, const Types& t) {
  const uint32_t chunk = 16 / element_bytes(t);
  const auto bad = [&](const std::string& rule) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("coopmat configuration {}x{}x{} warp {}x{} fragment {}x{}x{} subgroup {} (VKGEMM_EXPERIMENT_"
                            "COOPMAT?): {}",
                            c.bm, c.bn, c.bk, c.wm, c.wn, c.tm, c.tn, c.tk, c.sg, rule));
  };
  if (!c.wm || !c.wn || c.wm % c.tm || c.wn % c.tn) bad("the warp tile must be whole fragments");
  if (!c.bm || !c.bn || c.bm % c.wm || c.bn % c.wn) bad("the workgroup tile must be whole warp tiles");
  if (c.bm % chunk || c.bn % chunk || !c.bk || c.bk % chunk || c.bk % c.tk) {
    bad(fmt::format("bm, bn and bk must be multiples of {} ({}), bk of the fragment's K", chunk,
                    chunk == 8 ? "8 16-bit elements: 16 bytes" : "16 bytes"));
  }
  if (c.unroll < 1 || c.unroll > 16) bad("unroll is 1 to 16");
  if (c.buffers != 1 && c.buffers != 2) bad("buffers is 1 or 2");
  if (c.group < 1 || c.group > 64) bad("group is 1 to 64");
}

// A device without the extension is planned as an NVIDIA-like one (16x16x16 at subgroup 32), so that a
// malformed option is named as such whatever the device; check_matrix_kernel refuses it anyway.
DeviceInfo khr_nominal(const DeviceInfo& d, const Types& t) {
  if (d.coopmat_khr) return d;
  DeviceInfo n = d;
  n.subgroup_size = n.min_subgroup_size = n.max_subgroup_size = 32;
  n.subgroup_size_control = true;
  n.max_workgroup_invocations = std::max(n.max_workgroup_invocations, 256u);
  const ShapeTypes w = shape_types(t);
  CooperativeMatrixShape s;
  s.m = s.n = 16;
  s.k = 32 / element_bytes(t);  // 16x16x16 f16 and bf16, 16x16x32 int8
  s.a_type = s.b_type = w.ab;
  s.c_type = s.result_type = w.acc;
  s.scope = "subgroup";
  n.coopmat_shapes = {s};
  return n;
}

// The wide tile, for GPUs with 32-wide subgroups: the large tile with each subgroup's warp tile twice as wide
// (64x64 of 16x16 fragments, 128 accumulator elements per lane) and the fast loop unrolled 2 steps, a
// 128x256 tile, faster than the large tile where the grid is long enough (docs/design/coopmat.md). It halves
// the workgroups, so it is taken only where it still gives twice kEnoughWorkgroups.
// Not where the experiment knob sets the tile, on CPU devices (compile time) or on 64-wide subgroups, whose
// large tile already holds that many accumulators per lane.
// With fp16 sums an accumulator takes half the registers: the wide tile is 256x256, each subgroup 128x64
// (256 accumulator elements per lane, the registers fp32 sums' 128 take), the 8 subgroups 2 high and 4 wide
// as NVIDIA's sample stands them (faster than 4 high on an H200, docs/design/coopmat.md), single-buffered
// where two buffers do not fit, the fast loop unrolled as the large tile's.
std::optional<KhrConfig> khr_wide(const DeviceInfo& d, const Types& t, KhrConfig c) {
  const KhrExperiment& e = khr_experiment();
  if (d.type == DeviceType::cpu || c.sg != 32 || e.bm || e.bn || e.wm || e.wn || e.unroll || e.buffers) return {};
  if (t.f16_accumulate && c.subgroups() == 8) {
    c.wm *= 2;
    c.wn *= 2;
    c.bm = c.wm * 2;
    c.bn = c.wn * 4;
  } else {
    c.wn *= 2;
    c.bn *= 2;
    c.unroll = 2;
  }
  c.buffers = 2;
  if (khr_shared_bytes(c, t) > d.max_shared_memory) c.buffers = 1;
  if (khr_shared_bytes(c, t) > d.max_shared_memory) return {};
  return c;
}

// The KHR kernel's tiles on a device: large, small and (where it fits) wide.
struct KhrTiles {
  KhrConfig large, small;
  std::optional<KhrConfig> wide;
  std::string device;
};

KhrTiles khr_tiles(const DeviceInfo& device, const Types& t) {
  const DeviceInfo d = khr_nominal(device, t);
  KhrTiles k{khr_derive(d, t, 8), khr_derive(d, t, 4), std::nullopt, d.name};
  k.wide = khr_wide(d, t, k.large);
  return k;
}

// The tile GemmOptions::tile names by its columns; none for 16 (chosen by shape). Throws for another.
std::optional<KhrConfig> khr_named(const KhrTiles& k, uint32_t tile) {
  if (k.wide && tile == k.wide->bn) return k.wide;
  if (tile == k.large.bn) return k.large;
  if (tile == k.small.bn) return k.small;
  if (tile == 16) return std::nullopt;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("the coopmat kernel's tile is {} on {} (the columns of C per workgroup; 16, the default: "
                          "chosen by shape), not {}",
                          k.wide ? fmt::format("{}, {} or {}", k.small.bn, k.large.bn, k.wide->bn)
                                 : fmt::format("{} or {}", k.small.bn, k.large.bn),
                          k.device, tile));
}

// The wave model's figures for the KHR kernel's large and wide tiles with fp32 sums (tuning/wave_model.hpp; as
// Nv2Tile's): TFLOP/s at 4096^3 and the fixed cost in K steps that gives the time at 4096^2 x 512, both
// measured in one run on an H200 (docs/design/coopmat.md). Only their ratio matters on other devices.
struct KhrModel {
  double measured_tflops;
  uint32_t k_overhead;
};
constexpr KhrModel kKhrLargeModel{215.7, 359}, kKhrWideModel{284.5, 517};

// Whether the wave model expects the wide tile to finish an m x n x k product (batch entries) before the
// large one: it halves the workgroups, so it wins where the large tile's last wave is the costlier (2048^3:
// one wave of 128 wide tiles against two of 256 large ones) and loses where it leaves units idle that the
// large tile fills (4096 x 512 x 14336: 64 wide tiles against 128).
bool khr_wide_wins(const DeviceInfo& d, const KhrConfig& large, const KhrConfig& wide, const tuning::Work& work) {
  const tuning::Machine machine = tuning::machine_of(d);
  const tuning::Work at{4096, 4096, 4096, 1};
  const auto seconds = [&](const KhrConfig& c, const KhrModel& figures) {
    const uint32_t saturating = tuning::saturating_workgroups(d, c.subgroups() * c.sg);
    tuning::TileModel model{c.bm, c.bn, saturating, figures.k_overhead, 1.0};
    model.unit_gflops = tuning::calibrate_unit_gflops(machine, model, at, 1, figures.measured_tflops * 1e3);
    return tuning::main_seconds(machine, model, work, 1);
  };
  return seconds(wide, kKhrWideModel) < seconds(large, kKhrLargeModel);
}

// By shape: the small tile where the large one gives fewer than kEnoughWorkgroups (batch entries counted),
// else the wide one where the wave model expects it first (with fp16 sums, whose 256 x 256 tile is not
// modelled: where it still gives twice kEnoughWorkgroups), else the large one.
KhrConfig khr_config(const DeviceInfo& device, const Types& t, const tuning::Work& work, uint32_t tile = 16) {
  const KhrTiles k = khr_tiles(device, t);
  const auto m = static_cast<uint32_t>(work.m), n = static_cast<uint32_t>(work.n);
  KhrConfig c = tiles(m, n, k.large.bm, k.large.bn) * work.batch >= kEnoughWorkgroups ? k.large : k.small;
  if (k.wide && c.bm == k.large.bm && c.bn == k.large.bn) {
    const bool wins = t.f16_accumulate ? tiles(m, n, k.wide->bm, k.wide->bn) * work.batch >= 2 * kEnoughWorkgroups
                                       : khr_wide_wins(device, k.large, *k.wide, work);
    if (wins) c = *k.wide;
  }
  c = khr_named(k, tile).value_or(c);
  khr_check(c, t);
  return c;
}

// The largest configuration `tile` lets a product choose (the wide tile, else the large one), for the
// checks that hold for every product.
KhrConfig khr_largest(const DeviceInfo& device, const Types& t, uint32_t tile) {
  const KhrTiles k = khr_tiles(device, t);
  const KhrConfig c = khr_named(k, tile).value_or(k.wide ? *k.wide : k.large);
  khr_check(c, t);
  return c;
}

LaunchShape khr_launch(const DeviceInfo& d, const Types& t, const KhrConfig& c) {
  LaunchShape shape;
  shape.workgroup_size = {c.subgroups() * c.sg, 1, 1};
  shape.tile = {c.bn, c.bm};
  // Required through subgroup size control where the device has it (the subgroups' layout over the tile
  // assumes exactly this size, all full); else the device's own size, which khr_subgroup checked.
  shape.required_subgroup_size = d.subgroup_size_control ? c.sg : 0;
  shape.constants = {{"WG", c.subgroups() * c.sg},
                     {"BM", c.bm},
                     {"BN", c.bn},
                     {"BK", c.bk},
                     {"WM", c.wm},
                     {"WN", c.wn},
                     {"TM", c.tm},
                     {"TN", c.tn},
                     {"TK", c.tk},
                     {"SG", c.sg},
                     {"UNROLL", c.unroll},
                     {"BUFFERS", c.buffers},
                     {"GROUP_M", c.group}};
  shape.shared_bytes = khr_shared_bytes(c, t);
  return shape;  // the coopmat spec adds TRANS_A and TRANS_B (kernels/coopmat.cpp)
}

}  // namespace

bool is_matrix_kernel(Kernel kernel) noexcept { return kernel == Kernel::coopmat || kernel == Kernel::coopmat2; }

void check_matrix_kernel(const DeviceInfo& d, Kernel kernel, const Types& t) {
  if (kernel == Kernel::coopmat) {
    if (!d.coopmat_khr) {
      throw Error(ErrorCode::unsupported_config,
                  fmt::format("the coopmat kernel needs VK_KHR_cooperative_matrix (and Vulkan 1.3), which {} does not "
                              "have; the tiled kernel (GemmOptions::kernel) runs {} there",
                              d.name, to_string(t.input)));
    }
    check_common(d, "coopmat", t);
    khr_largest(d, t, 16);  // throws naming what the device lacks
    return;
  }
  if (!d.coopmat2) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the coopmat2 kernel needs VK_NV_cooperative_matrix2 with workgroup scope, flexible "
                            "dimensions, tensor addressing and conversions, which {} does not have",
                            d.name));
  }
  check_common(d, "coopmat2", t);
  if (!nv2_shape(d, t, kNv2Small) && !nv2_shape(d, t, kNv2Medium)) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the coopmat2 kernel needs a workgroup-scope flexible shape {} for 128 or 256 "
                            "invocations; {} lists none (DeviceInfo::coopmat2_shapes shows what it has)",
                            shapes_wanted(t), d.name));
  }
}

LaunchShape coopmat_launch(const DeviceInfo& d, const Types& t, const GemmOptions& options, uint32_t m, uint32_t n,
                           uint32_t k, uint32_t batch) {
  return khr_launch(d, t, khr_config(d, t, {m, n, std::max(k, 1u), std::max(batch, 1u)}, options.tile));
}

KhrFragment khr_fragment(const DeviceInfo& d, Kernel kernel, const Types& t) {
  if (!d.coopmat_khr) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the {} kernel needs VK_KHR_cooperative_matrix (and Vulkan 1.3), which {} does not have; "
                            "the tiled kernel (GemmOptions::kernel) runs {} there",
                            to_string(kernel), d.name, to_string(t.input)));
  }
  check_common(d, std::string(to_string(kernel)).c_str(), t);
  const KhrExperiment& e = khr_experiment();
  const CooperativeMatrixShape s = khr_shape(d, t, e);
  return {s.m, s.n, s.k, khr_subgroup(d, e)};
}

LaunchShape coopmat_largest_launch(const DeviceInfo& d, const Types& t, const GemmOptions& options) {
  return khr_launch(d, t, khr_largest(d, t, options.tile));
}

namespace {

// Slices of K that bring `groups` workgroups up to `enough`, at most 4 and each 2048 deep or more; 0 when
// that cannot be done, 1 when there are enough already.
uint32_t splits_to_fill(uint64_t groups, uint32_t k, uint64_t enough = kEnoughWorkgroups) {
  if (groups >= enough) return 1;
  const uint64_t wanted = (enough + groups - 1) / groups;
  return wanted <= 4 && k / wanted >= 2048 ? static_cast<uint32_t>(wanted) : 0;
}

// Of the modelled tiles, the one the wave model expects to finish an unsplit product first: by its waves
// (1536^3: 128 tiles of 96x192 fill one wave on 132 SMs, 72 of 128x256 leave 60 idle) and by each tile's fixed
// cost against K (K-light products: 128x128's fixed cost is the smaller, so it wins there).
Nv2Tile modelled_tile(const DeviceInfo& d, uint32_t m, uint32_t n, uint32_t k, uint32_t batch) {
  const tuning::Machine machine = tuning::machine_of(d);
  // K 0 (an empty sum: C = beta C) reads as 1.
  const tuning::Work at{4096, 4096, 4096, 1}, work{m, n, std::max(k, 1u), batch};
  const auto seconds = [&](const Nv2Tile& tile) {
    tuning::TileModel model{tile.bm, tile.bn, tuning::saturating_workgroups(d, tile.invocations), tile.k_overhead, 1.0};
    model.unit_gflops = tuning::calibrate_unit_gflops(machine, model, at, 1, tile.measured_tflops * 1e3);
    return tuning::main_seconds(machine, model, work, 1);
  };
  // 128x256 unless another tile is expected kModelMargin faster: the model misjudges tiles by up to ~15 %
  // where waves do not decide, and by far less than what it gains where they do (docs/design/coopmat2.md).
  constexpr double kModelMargin = 1.10;
  Nv2Tile best = kNv2Large;
  double best_seconds = seconds(kNv2Large) / kModelMargin;
  for (const Nv2Tile& tile : {kNv2Tall, kNv2Wide, kNv2Medium}) {
    if (const double s = seconds(tile); s < best_seconds) best = tile, best_seconds = s;
  }
  return best;
}

}  // namespace

bool coopmat2_splittable(const Types& types) noexcept {
  return types.input == DataType::f16 || types.input == DataType::bf16;
}

// bf16 to bf16 on coopmat2 rather than on the KHR kernel, which rounds C in its own store
// (docs/design/coopmat2.md). C stored by the main pass (beta 0, one slice): everywhere but the 128x256 tile
// with B untransposed, and the K-light products (K up to kKhrBf16LightK) on its 128x128 and 192x128 tiles,
// where the KHR kernel measured faster (a short K loop leaves nothing to hide coopmat2's rounding into its
// f16 matrix of the bits). C through the fp32 workspace and the reduce pass: where coopmat2
// splits K (a short grid), or where the wave model took its 192x128 or 96x192 tile for the waves (3072^3).
bool coopmat2_first_for_bf16_c(const LaunchShape& main, uint32_t splits, bool through_workspace, bool trans_b,
                               uint32_t k) {
  const auto is = [&](const Nv2Tile& t) { return main.tile[1] == t.bm && main.tile[0] == t.bn; };
  if (!through_workspace) {
    if (k <= kKhrBf16LightK && (is(kNv2Medium) || is(kNv2Tall))) return false;
    return trans_b || !is(kNv2Large);
  }
  return splits > 1 || is(kNv2Tall) || is(kNv2Wide);
}

uint32_t coopmat2_splits(const LaunchShape& shape, uint32_t m, uint32_t n, uint32_t k, uint32_t batch) {
  uint32_t bk = 64;
  for (const SpecConstant& c : shape.constants) bk = c.name == "BK" ? c.value : bk;
  const uint32_t steps = (k + bk - 1) / bk;
  if (const Coopmat2Experiment& e = coopmat2_experiment(); e.splits) return std::max(1u, std::min(e.splits, steps));
  // A grid smaller than a large GPU, with a K long enough to share: as many slices as fill it (up to 4),
  // else as many as K allows. The reduce pass reads every slice back once.
  const uint64_t groups = tiles(m, n, shape.tile[1], shape.tile[0]) * batch;
  const bool skinny = shape.tile[1] == kNv2Skinny.bm, thin = shape.tile[1] == kNv2Thin.bm;
  const uint64_t enough = skinny ? kSkinnyWorkgroups : thin ? kThinWorkgroups : kEnoughWorkgroups;
  if (groups >= enough || k < 4096) return 1;
  if (skinny || thin) {
    const uint32_t min_slice = skinny ? kSkinnyMinSlice : kThinMinSlice;
    const uint64_t wanted = std::min<uint64_t>((enough + groups - 1) / groups, k / min_slice);
    return static_cast<uint32_t>(std::clamp<uint64_t>(wanted, 1, kThinMaxSlices));
  }
  if (const uint32_t s = splits_to_fill(groups, k, enough)) return s;
  return std::clamp(k / 2048, 1u, 4u);
}

namespace {

// GemmOptions::tile's name for each tile, the one rule both ways (named_tile, coopmat2_tile_option): 256 is
// the large tile of either sums' type.
struct NamedTile {
  uint32_t option;
  const Nv2Tile* tile;
};
constexpr NamedTile kNamedTiles[] = {{32, &kNv2Skinny}, {32, &kNv2Thin},   {64, &kNv2Small},  {96, &kNv2Wide},
                                     {128, &kNv2Medium}, {192, &kNv2Tall},  {256, &kNv2Large},
                                     {256, &kNv2LargeAcc16}, {512, &kNv2Narrow}};

}  // namespace

uint32_t coopmat2_tile_option(uint32_t bm, uint32_t bn) {
  for (const NamedTile& n : kNamedTiles) {
    if (n.tile->bm == bm && n.tile->bn == bn) return n.option;
  }
  return std::max(bm, bn);  // a tile the experiment knob made: named by its longer side, as it was launched
}

// Whether a product of m rows takes the 16-row tile (kNv2Skinny) where the thin tiles are asked for.
bool coopmat2_skinny_tile(const DeviceInfo& d, const Types& t, uint32_t m, uint32_t n, uint32_t k, uint32_t batch) {
  const bool splits = k >= 4096 && tiles(m, n, kNv2Skinny.bm, kNv2Skinny.bn) * batch < kSkinnyWorkgroups;
  return m <= kNv2Skinny.bm && coopmat2_splittable(t) && !t.f16_accumulate && splits && nv2_shape(d, t, kNv2Skinny);
}

namespace {

// The tile GemmOptions::tile names (`large` is 256's, by the sums' type); 32 names the thin tiles, 16 x 64 where
// coopmat2_skinny_tile takes it (`skinny`), else 32 x 64.
Nv2Tile named_tile(const DeviceInfo& d, const Types& t, uint32_t option, const Nv2Tile& large, bool skinny) {
  const Nv2Tile* tile = nullptr;
  for (const NamedTile& n : kNamedTiles) {
    if (n.option == option && !tile) tile = option == 256 ? &large : n.tile;
  }
  if (tile == &kNv2Skinny && !skinny) tile = &kNv2Thin;
  if (!tile) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the coopmat2 kernel's tile is 32, 64, 96, 128, 192, 256 or 512 (16, the default: chosen "
                            "by shape), not {}",
                            option));
  }
  if (d.coopmat2 && !nv2_shape(d, t, *tile)) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("coopmat2 tile {}: {} lists no workgroup-scope shape {} for {} invocations that divides "
                            "{}x{}x{}",
                            option, d.name, shapes_wanted(t), tile->invocations, tile->bm, tile->bn, tile->bk));
  }
  return *tile;
}

// The tile for the product when the option leaves it to the shape (16).
Nv2Tile chosen_tile(const DeviceInfo& d, const Types& t, uint32_t m, uint32_t n, uint32_t k, uint32_t batch,
                    const Nv2Tile& large) {
  if (coopmat2_skinny_tile(d, t, m, n, k, batch)) return kNv2Skinny;
  if (m <= kNv2Thin.bm && nv2_shape(d, t, kNv2Thin)) return kNv2Thin;
  // Narrower than 128 x 128 (a larger tile would lie mostly outside C): 64x64, or 256x64 for a 16-bit product
  // exactly 64 wide whose 256-row tiles still run two to every SM of a large GPU. Narrower, its one column of
  // tiles is an edge tile, whose clamped path ran slower on 256x64 than on 64x64 (4, 33 and 48 wide:
  // docs/design/coopmat2.md).
  if ((m < kNv2Medium.bm || n < kNv2Medium.bn) && nv2_shape(d, t, kNv2Small)) {
    const bool narrow = n == kNv2Narrow.bn && m >= kNv2Narrow.bm && coopmat2_splittable(t) &&
                        tiles(m, n, kNv2Narrow.bm, kNv2Narrow.bn) * batch >= 2 * kEnoughWorkgroups;
    return narrow && nv2_shape(d, t, kNv2Narrow) ? kNv2Narrow : kNv2Small;
  }
  // The largest tile that gives enough workgroups, by itself or split along K (coopmat2_splits): a large
  // tile split beats a medium one unsplit.
  // With fp32 sums and enough workgroups unsplit, the wave model chooses among the measured tiles; a
  // large tile that needs a split to fill the device keeps it (the split-K path).
  // Then 128x128, by itself or split along K (where the large tile would need slices shorter than 2048;
  // docs/design/coopmat2.md); else 64x64.
  // i8 and u8 run one slice (coopmat2.cpp): a tile fills the device by itself or not at all.
  const auto slices = [&](const Nv2Tile& tile) {
    const uint64_t groups = tiles(m, n, tile.bm, tile.bn) * batch;
    return coopmat2_splittable(t) ? splits_to_fill(groups, k) : static_cast<uint32_t>(groups >= kEnoughWorkgroups);
  };
  Nv2Tile tile = kNv2Small;
  const uint32_t large_splits = slices(large);
  const uint32_t medium_splits = slices(kNv2Medium);
  if (!t.f16_accumulate && (large_splits == 1 || (large_splits == 0 && medium_splits == 1))) {
    tile = modelled_tile(d, m, n, k, batch);
  } else if (large_splits != 0) {
    tile = large;
  } else if (medium_splits != 0) {
    tile = kNv2Medium;
  }
  // A tile the device lists no shape for falls back to one it does.
  if (!nv2_shape(d, t, tile)) tile = nv2_shape(d, t, kNv2Medium) ? kNv2Medium : kNv2Small;
  return tile;
}

// Tile 256 is the largest tile for the accumulator's type: 128 x 256 with fp32 sums, 256 x 256 with fp16.
const Nv2Tile& large_tile(const Types& t) { return t.f16_accumulate ? kNv2LargeAcc16 : kNv2Large; }

// The launch of `tile` (as the experiment knob may change it).
LaunchShape nv2_launch(Nv2Tile tile) {
  const Coopmat2Experiment& e = coopmat2_experiment();
  if (e.bm) tile.bm = e.bm;
  if (e.bn) tile.bn = e.bn;
  if (e.bk) tile.bk = e.bk;
  if (e.invocations) tile.invocations = e.invocations;
  if (e.prefetch) tile.prefetch = *e.prefetch;
  if (e.unroll) tile.unroll = e.unroll;
  LaunchShape shape;
  shape.workgroup_size = {tile.invocations, 1, 1};
  shape.tile = {tile.bn, tile.bm};
  shape.constants = {{"WG", tile.invocations}, {"BM", tile.bm},      {"BN", tile.bn},
                     {"BK", tile.bk},          {"PREFETCH", tile.prefetch},
                     {"GROUP_M", e.group ? e.group : 1}, {"UNROLL", tile.unroll}};
  return shape;  // shared memory is the driver's (cooperativeMatrixWorkgroupScopeReservedSharedMemory)
}

// The tile for the element type: 8-bit A and B take the tile's bk8.
Nv2Tile for_elements(Nv2Tile tile, const Types& t) {
  if (t.input == DataType::i8 || t.input == DataType::u8) tile.bk = tile.bk8;
  return tile;
}

}  // namespace

LaunchShape coopmat2_launch(const DeviceInfo& d, const Types& t, const GemmOptions& options, uint32_t m, uint32_t n,
                            uint32_t k, uint32_t batch) {
  const Nv2Tile& large = large_tile(t);
  if (options.tile == 16) return nv2_launch(for_elements(chosen_tile(d, t, m, n, k, batch, large), t));
  const bool skinny = coopmat2_skinny_tile(d, t, m, n, k, batch);  // only a named tile asks (chosen_tile does)
  return nv2_launch(for_elements(named_tile(d, t, options.tile, large, skinny), t));
}

LaunchShape coopmat2_largest_launch(const DeviceInfo& d, const Types& t, const GemmOptions& options) {
  const Nv2Tile& large = large_tile(t);
  if (options.tile != 16) return nv2_launch(for_elements(named_tile(d, t, options.tile, large, false), t));
  // chosen_tile's largest: the large tile where the device lists a shape for it, else 128x128, else 64x64.
  return nv2_launch(
      for_elements(nv2_shape(d, t, large) ? large : nv2_shape(d, t, kNv2Medium) ? kNv2Medium : kNv2Small, t));
}

}  // namespace vkgemm::kernels
