// The cooperative-matrix kernels' side of the registry: what they need of a device, and the tile, fragment
// and workgroup each product gets (shaders/coopmat.comp, shaders/coopmat2.comp).
#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "engine/environment.hpp"
#include "gemm_abi.h"
#include "kernels/registry.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

constexpr uint32_t kSubgroup = 32;  // coopmat's subgroup size, required through subgroup size control

// One workgroup tile of the KHR kernel: BM x BN of C, BK along K per step, subgroups owning WM x WN each.
struct KhrTile {
  uint32_t bm, bn, bk, wm, wn;
};
constexpr KhrTile kKhrLarge{128, 128, 32, 64, 32};  // 8 subgroups, 256 invocations
constexpr KhrTile kKhrSmall{64, 64, 32, 32, 32};    // 4 subgroups, 128 invocations

// One workgroup tile of the NV coopmat2 kernel (the sizes llama.cpp's Vulkan backend uses with it).
struct Nv2Tile {
  uint32_t invocations, bm, bn, bk;
  uint32_t prefetch = 0;  // software pipelining (shaders/coopmat2.comp PREFETCH)
  // K steps per iteration of the fast loop (shaders/coopmat2.comp UNROLL): 8 made the driver overlap loads
  // with the tensor-core work, +34% at 4096^3 and +33% at 4096x512x14336 on an H200 (perf-notes section 12).
  uint32_t unroll = 8;
};
// 16 steps at fp32 sums: +2-4% over 8 (perf-notes section 12).
constexpr Nv2Tile kNv2Large{.invocations = 256, .bm = 128, .bn = 256, .bk = 64, .unroll = 16};
// With fp16 sums the accumulator takes half the registers, and a 256 x 256 tile fits; unrolled it beat
// software pipelining by 23% at 4096^3 (perf-notes section 12).
constexpr Nv2Tile kNv2LargeAcc16{256, 256, 256, 32};
constexpr Nv2Tile kNv2Medium{256, 128, 128, 64};
constexpr Nv2Tile kNv2Small{128, 64, 64, 64};

const char* acc_name(const Types& t) { return t.f16_accumulate ? "f16" : "f32"; }

uint64_t tiles(uint32_t m, uint32_t n, uint32_t bm, uint32_t bn) {
  return ((uint64_t{m} + bm - 1) / bm) * ((uint64_t{n} + bn - 1) / bn);
}

// Enough workgroups to keep a large GPU busy (an H100/H200 has 132 multiprocessors): prefer the largest
// tile that still gives this many, since larger tiles reuse each loaded element more often.
constexpr uint64_t kEnoughWorkgroups = 128;

// The subgroup-scope f16 shape for these types, preferring 16x16x16. Shapes whose sides are not multiples
// of 4 (the kernel addresses shared memory in 4-half vectors) or that do not divide the tiles are skipped.
std::optional<CooperativeMatrixShape> khr_shape(const DeviceInfo& d, const Types& t) {
  std::optional<CooperativeMatrixShape> best;
  for (const auto& s : d.coopmat_shapes) {
    if (s.scope != "subgroup" || s.a_type != "f16" || s.b_type != "f16" || s.c_type != acc_name(t) ||
        s.result_type != acc_name(t) || s.saturating) {
      continue;
    }
    if (s.m == 0 || s.n == 0 || s.k == 0 || s.n % 4 || s.k % 4 || kKhrSmall.wm % s.m || kKhrSmall.wn % s.n ||
        kKhrLarge.wn % s.n || kKhrSmall.bk % s.k) {
      continue;
    }
    if (!best || (s.m == 16 && s.n == 16 && s.k == 16)) best = s;
  }
  return best;
}

bool fits(const CooperativeMatrixShape& s, uint32_t invocations, const Nv2Tile& tile) {
  return (s.workgroup_invocations == 0 || s.workgroup_invocations == invocations) && s.m && s.n && s.k &&
         tile.bm % s.m == 0 && tile.bn % s.n == 0 && tile.bk % s.k == 0;
}

std::optional<CooperativeMatrixShape> nv2_shape(const DeviceInfo& d, const Types& t, const Nv2Tile& tile) {
  for (const auto& s : d.coopmat2_shapes) {
    if (s.scope == "workgroup" && s.a_type == "f16" && s.b_type == "f16" && s.c_type == acc_name(t) &&
        s.result_type == acc_name(t) && !s.saturating && fits(s, tile.invocations, tile)) {
      return s;
    }
  }
  return std::nullopt;
}

std::string shapes_wanted(const Types& t) {
  return fmt::format("f16 x f16 + {} -> {}", acc_name(t), acc_name(t));
}

void check_common(const DeviceInfo& d, const char* kernel) {
  if (!d.vulkan_memory_model) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the {} kernel needs the vulkanMemoryModel feature, which {} does not have", kernel, d.name));
  }
}

}  // namespace

bool is_matrix_kernel(Kernel kernel) noexcept { return kernel == Kernel::coopmat || kernel == Kernel::coopmat2; }

void check_matrix_kernel(const DeviceInfo& d, Kernel kernel, const Types& t) {
  if (kernel == Kernel::coopmat) {
    if (!d.coopmat_khr) {
      throw Error(ErrorCode::unsupported_config,
                  fmt::format("the coopmat kernel needs VK_KHR_cooperative_matrix (and Vulkan 1.3), which {} does not "
                              "have; the tiled kernel (GemmOptions::kernel) runs f16 there",
                              d.name));
    }
    check_common(d, "coopmat");
    if (!d.subgroup_size_control || d.min_subgroup_size > kSubgroup || d.max_subgroup_size < kSubgroup) {
      throw Error(ErrorCode::unsupported_config,
                  fmt::format("the coopmat kernel needs subgroups of {} through subgroupSizeControl and "
                              "computeFullSubgroups; {} has {} (sizes {} to {})",
                              kSubgroup, d.name, d.subgroup_size_control ? "them" : "no subgroup size control",
                              d.min_subgroup_size, d.max_subgroup_size));
    }
    if (!khr_shape(d, t)) {
      throw Error(ErrorCode::unsupported_config,
                  fmt::format("the coopmat kernel needs a subgroup-scope cooperative matrix shape {} with sides that "
                              "divide 32; {} lists none (DeviceInfo::coopmat_shapes shows what it has)",
                              shapes_wanted(t), d.name));
    }
    return;
  }
  if (!d.coopmat2) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the coopmat2 kernel needs VK_NV_cooperative_matrix2 with workgroup scope, flexible "
                            "dimensions, tensor addressing and conversions, which {} does not have",
                            d.name));
  }
  check_common(d, "coopmat2");
  if (!nv2_shape(d, t, kNv2Small) && !nv2_shape(d, t, kNv2Medium)) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the coopmat2 kernel needs a workgroup-scope flexible shape {} for 128 or 256 "
                            "invocations; {} lists none (DeviceInfo::coopmat2_shapes shows what it has)",
                            shapes_wanted(t), d.name));
  }
}

LaunchShape coopmat_launch(const DeviceInfo& d, const Types& t, const GemmOptions& options, uint32_t m, uint32_t n) {
  KhrTile tile = tiles(m, n, kKhrLarge.bm, kKhrLarge.bn) >= kEnoughWorkgroups ? kKhrLarge : kKhrSmall;
  if (options.tile == 64) tile = kKhrSmall;
  else if (options.tile == 128) tile = kKhrLarge;
  else if (options.tile != 16) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the coopmat kernel's tile is 64 or 128 (16, the default: chosen by shape), not {}",
                            options.tile));
  }
  // Fragment shape: the device's (a device without one fails check_matrix_kernel; 16^3 keeps this total).
  const auto s = khr_shape(d, t).value_or(CooperativeMatrixShape{16, 16, 16});
  const uint32_t subgroups = (tile.bm / tile.wm) * (tile.bn / tile.wn);
  const uint32_t invocations = subgroups * kSubgroup;
  LaunchShape shape;
  shape.workgroup_size = {invocations, 1, 1};
  shape.tile = {tile.bn, tile.bm};
  shape.required_subgroup_size = kSubgroup;
  shape.constants = {{0, invocations}, {1, tile.bm}, {2, tile.bn}, {3, tile.bk}, {4, tile.wm},
                     {5, tile.wn},     {6, s.m},     {7, s.n},     {8, s.k},     {9, kSubgroup}};
  // A and B tiles with rows 16 bytes longer than the data (shared memory is addressed in 8-byte f16vec4),
  // and one TM x TN fragment of the accumulator per subgroup.
  const uint32_t a_bytes = tile.bm * (tile.bk / 4 + 2) * 8, b_bytes = tile.bk * (tile.bn / 4 + 2) * 8;
  // The C fragment is staged in the accumulator's type (fp16 sums: 2 bytes, else 4).
  shape.shared_bytes = a_bytes + b_bytes + subgroups * s.m * s.n * (t.f16_accumulate ? 2u : 4u);
  return shape;
}

// An experiment knob for the performance work (docs/perf-notes.md), not an interface, read only in a build
// configured with -DVKGEMM_EXPERIMENTS=ON: VKGEMM_EXPERIMENT_COOPMAT2
// = "bm=128,bn=256,bk=32,inv=256,prefetch=1,unroll=8,splits=2,group=8" overrides the coopmat2 kernel's
// workgroup tile (rows, columns, K step, invocations), its software pipelining, the unrolling of its fast
// loop, its split-K and its grouped block order;
// each key is optional. The values are not checked against the device's shapes: a bad one fails at pipeline
// creation, and a tile vkgemm does not use must be verified (256x192 computed wrong results on the H200's
// driver, perf-notes section 11). Read once per process: planning runs on every call.
namespace {

struct Nv2Experiment {
  uint32_t bm = 0, bn = 0, bk = 0, invocations = 0;  // 0: the tile's own
  std::optional<uint32_t> prefetch;  // unset: the tile's own
  uint32_t unroll = 0;    // 0: the tile's own
  uint32_t splits = 0;    // 0: coopmat2_splits decides
  uint32_t group = 0;     // 0: the tile's own
};

Nv2Experiment read_nv2_experiment() {
  Nv2Experiment e;
#ifdef VKGEMM_EXPERIMENTS
  const char* env = detail::experiment_coopmat2();
#else
  const char* env = nullptr;  // a release build has no experiment knobs
#endif
  if (!env) return e;
  const std::string_view text(env);
  const auto value = [&](std::string_view key) -> std::optional<uint32_t> {
    const size_t at = text.find(key);
    if (at == std::string_view::npos || (at > 0 && text[at - 1] != ',')) return std::nullopt;
    return static_cast<uint32_t>(std::strtoul(env + at + key.size(), nullptr, 10));
  };
  const auto multiple_of_16 = [](uint32_t v) { return v >= 16 && v <= 512 && v % 16 == 0; };
  if (const auto v = value("bm="); v && multiple_of_16(*v)) e.bm = *v;
  if (const auto v = value("bn="); v && multiple_of_16(*v)) e.bn = *v;
  if (const auto v = value("bk="); v && (*v == 16 || *v == 32 || *v == 64 || *v == 128)) e.bk = *v;
  if (const auto v = value("inv="); v && (*v == 32 || *v == 64 || *v == 128 || *v == 256)) e.invocations = *v;
  if (const auto v = value("prefetch=")) e.prefetch = *v != 0;
  if (const auto v = value("unroll="); v && *v >= 1 && *v <= 16) e.unroll = *v;
  if (const auto v = value("splits="); v && *v >= 1 && *v <= 8) e.splits = *v;
  if (const auto v = value("group="); v && *v >= 1 && *v <= 64) e.group = *v;
  return e;
}

const Nv2Experiment& nv2_experiment() {
  static const Nv2Experiment e = read_nv2_experiment();
  return e;
}

// Slices of K that bring `groups` workgroups up to kEnoughWorkgroups, at most 4 and each 2048 deep or more;
// 0 when that cannot be done, 1 when there are enough already.
uint32_t splits_to_fill(uint64_t groups, uint32_t k) {
  if (groups >= kEnoughWorkgroups) return 1;
  const uint64_t wanted = (kEnoughWorkgroups + groups - 1) / groups;
  return wanted <= 4 && k / wanted >= 2048 ? static_cast<uint32_t>(wanted) : 0;
}

}  // namespace

uint32_t coopmat2_splits(const LaunchShape& shape, uint32_t m, uint32_t n, uint32_t k, uint32_t batch) {
  const uint32_t bk = shape.constants.size() > 3 ? shape.constants[3].value : 64;
  const uint32_t steps = (k + bk - 1) / bk;
  if (const Nv2Experiment& e = nv2_experiment(); e.splits) return std::max(1u, std::min(e.splits, steps));
  // A grid smaller than a large GPU, with a K long enough to share: as many slices as fill it (up to 4),
  // else as many as K allows. The reduce pass reads every slice back once.
  const uint64_t groups = tiles(m, n, shape.tile[1], shape.tile[0]) * batch;
  if (groups >= kEnoughWorkgroups || k < 4096) return 1;
  if (const uint32_t s = splits_to_fill(groups, k)) return s;
  return std::clamp(k / 2048, 1u, 4u);
}

LaunchShape coopmat2_launch(const DeviceInfo& d, const Types& t, const GemmOptions& options, uint32_t m, uint32_t n,
                            uint32_t k, uint32_t batch) {
  // Tile 256 is the largest tile for the accumulator's type: 128 x 256 with fp32 sums, 256 x 256 with fp16.
  const Nv2Tile large = t.f16_accumulate ? kNv2LargeAcc16 : kNv2Large;
  Nv2Tile tile = kNv2Small;
  if (options.tile == 16) {
    // The largest tile that gives enough workgroups, by itself or split along K (coopmat2_splits): on the
    // H200 a large tile split beat a medium one unsplit (perf-notes section 11).
    if (splits_to_fill(tiles(m, n, large.bm, large.bn) * batch, k) != 0) {
      tile = large;
    } else if (tiles(m, n, kNv2Medium.bm, kNv2Medium.bn) >= kEnoughWorkgroups) {
      tile = kNv2Medium;
    }
    // A tile the device lists no shape for falls back to one it does.
    if (!nv2_shape(d, t, tile)) tile = nv2_shape(d, t, kNv2Medium) ? kNv2Medium : kNv2Small;
  } else if (options.tile == 64 || options.tile == 128 || options.tile == 256) {
    tile = options.tile == 64 ? kNv2Small : options.tile == 128 ? kNv2Medium : large;
    if (d.coopmat2 && !nv2_shape(d, t, tile)) {
      throw Error(ErrorCode::unsupported_config,
                  fmt::format("coopmat2 tile {}: {} lists no workgroup-scope shape {} for {} invocations that divides "
                              "{}x{}x{}",
                              options.tile, d.name, shapes_wanted(t), tile.invocations, tile.bm, tile.bn, tile.bk));
    }
  } else {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the coopmat2 kernel's tile is 64, 128 or 256 (16, the default: chosen by shape), not {}",
                            options.tile));
  }
  const Nv2Experiment& e = nv2_experiment();
  if (e.bm) tile.bm = e.bm;
  if (e.bn) tile.bn = e.bn;
  if (e.bk) tile.bk = e.bk;
  if (e.invocations) tile.invocations = e.invocations;
  if (e.prefetch) tile.prefetch = *e.prefetch;
  if (e.unroll) tile.unroll = e.unroll;
  LaunchShape shape;
  shape.workgroup_size = {tile.invocations, 1, 1};
  shape.tile = {tile.bn, tile.bm};
  shape.constants = {{COOPMAT2_SC_WG, tile.invocations}, {COOPMAT2_SC_BM, tile.bm},      {COOPMAT2_SC_BN, tile.bn},
                     {COOPMAT2_SC_BK, tile.bk},          {COOPMAT2_SC_PREFETCH, tile.prefetch},
                     {COOPMAT2_SC_GROUP_M, e.group ? e.group : 1}, {COOPMAT2_SC_UNROLL, tile.unroll}};
  return shape;  // shared memory is the driver's (cooperativeMatrixWorkgroupScopeReservedSharedMemory)
}

}  // namespace vkgemm::kernels
