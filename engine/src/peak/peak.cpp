// vkgemm peak (vkgemm/peak.hpp): which measurements a device can run, their kernels' sizes, and the work each
// dispatch does, counted from what the shaders execute (shaders/peak_*.comp).
#include "vkgemm/peak.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "peak/peak_context.hpp"
#include "ozaki/moduli.hpp"
#include "peak/timed_dispatch.hpp"
#include "vk/host_copies.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace {

using detail::peak::PeakContext;
using detail::peak::PeakKernel;

// The shaders' unrolled work per loop iteration (peak_fma.comp, peak_coopmat.comp).
constexpr double kFmaUnroll = 16.0;            // UNROLL: FMAs of each vec4 chain per iteration
constexpr double kMmaPerIteration = 4.0 * 8.0;  // accumulators x UNROLL
constexpr double kNv2MmaPerIteration = 8.0;    // peak_coopmat2.comp's UNROLL
constexpr double kCacheUnroll = 8.0;           // peak_cache.comp's UNROLL: reads per pass
// The cache row's buffer: far more than an SM's L1 (NVIDIA's is at most 256 KiB, AMD's and Intel's less),
// within every discrete GPU's last-level cache.
constexpr uint64_t kCacheBytes = 2ull << 20;
constexpr uint32_t kMaxIterations = 1u << 24;
constexpr const char* kDotRow = "int8 dot product (packed)";

// How hard to push: enough workgroups to fill a big GPU many times over; a CPU driver gets a few per core.
struct PeakLoad {
  double target_ms, warm_ms;
  uint32_t repeat;
  uint32_t groups;        // FMA and MMA kernels
  uint32_t fma_chains;    // independent vec4 FMA chains per invocation (peak_fma.comp's CHAINS)
  uint64_t copy_bytes;    // per copy buffer
};

PeakLoad plan_for(const DeviceInfo& info, const PeakOptions& options) {
  const bool cpu = info.type == DeviceType::cpu;
  PeakLoad plan;
  plan.target_ms = options.target_ms > 0.0 ? options.target_ms : (cpu ? 20.0 : 10.0);
  plan.warm_ms = options.warm_ms >= 0.0 ? options.warm_ms : (cpu ? 0.0 : 200.0);
  plan.repeat = options.repeat;
  plan.groups = std::min(cpu ? 32u : 8192u, info.max_workgroup_count[0]);
  plan.fma_chains = cpu ? 2 : 8;  // lavapipe on AVX2: 8 chains spill (0.022 TFLOP/s), 4 read 0.037, 2 0.05
  uint64_t bytes = cpu ? (32ull << 20) : (256ull << 20);
  bytes = std::min({bytes, info.max_storage_buffer_range, info.max_allocation_size});
  if (info.device_local_memory) bytes = std::min(bytes, info.device_local_memory / 8);
  plan.copy_bytes = bytes / 16 * 16;
  return plan;
}

PeakMeasurement unavailable(std::string name, std::string unit, std::string reason) {
  PeakMeasurement m;
  m.name = std::move(name);
  m.unit = std::move(unit);
  m.reason = std::move(reason);
  return m;
}

// Fills in the value from the timed dispatches: `work` FLOPs (TFLOP/s) or bytes (GB/s) per dispatch.
void finish(PeakMeasurement& m, std::vector<double> gpu_ms, double work) {
  m.measured = true;
  m.gpu_ms = std::move(gpu_ms);
  m.median_ms = detail::peak::median(m.gpu_ms);
  m.work = work;
  const double per_second = m.median_ms > 0.0 ? work / (m.median_ms * 1e-3) : 0.0;
  m.value = per_second * (m.unit == "GB/s" ? 1e-9 : 1e-12);
}

uint32_t workgroup_size(const DeviceInfo& info) { return std::min(256u, info.max_workgroup_invocations); }

// The FMA rows: each type's name, shader and the feature it needs (DeviceInfo's flag, named as Vulkan names it).
struct FmaRow {
  const char* name;
  const char* shader;
  bool DeviceInfo::*feature;  // null: every device has it
  const char* feature_name;
};
constexpr FmaRow kFmaRows[] = {
    {"f32 FMA", "peak_fma_f32", nullptr, ""},
    {"f16 FMA (packed)", "peak_fma_f16", &DeviceInfo::float16, "shaderFloat16"},
    {"f64 FMA", "peak_fma_f64", &DeviceInfo::float64, "shaderFloat64"},
};

std::string fma_refusal(const DeviceInfo& info, const FmaRow& row) {
  if (row.feature && !(info.*row.feature)) return fmt::format("not available: the device has no {}", row.feature_name);
  return {};
}

kernels::LaunchShape fma_shape(const DeviceInfo& info, const PeakLoad& plan, const FmaRow& row) {
  kernels::LaunchShape shape;
  shape.shader = row.shader;
  shape.constants = {{"WG", workgroup_size(info)}, {"CHAINS", plan.fma_chains}};
  return shape;
}

PeakMeasurement measure_fma(const PeakContext& e, const PeakLoad& plan, const FmaRow& row) {
  const DeviceInfo& info = e.physical.info;
  PeakMeasurement m = unavailable(row.name, "TFLOP/s", fma_refusal(info, row));
  if (!m.reason.empty()) return m;
  const uint32_t wg = workgroup_size(info);
  vk::AllocatedBuffer out = e.create_buffer(uint64_t{plan.groups} * wg * 16, "vkgemm peak fma");
  const VkBuffer vk_out = out.buffer.get();
  PeakKernel k;
  k.shape = fma_shape(info, plan, row);
  k.groups = plan.groups;
  k.src = k.dst = {vk_out, 0, VK_WHOLE_SIZE};
  const float mul = -0.5f, add = 1.0f;  // x = -x/2 + 1 settles on 2/3 (peak_fma.comp)
  std::memcpy(k.push.scalars, &mul, 4);
  std::memcpy(k.push.scalars + 4, &add, 4);
  const auto timing = detail::peak::calibrate_and_time(e, k, plan.target_ms, plan.warm_ms, plan.repeat, kMaxIterations);
  const double invocations = double(plan.groups) * wg;
  const double vec4_fmas = plan.fma_chains * kFmaUnroll * timing.target_iterations * invocations;
  finish(m, timing.gpu_ms, 2.0 * 4.0 * vec4_fmas);  // 2 FLOPs per lane, 4 lanes
  m.iterations = timing.target_iterations;
  m.detail = fmt::format("{} workgroups of {}, {} iterations of {} chains x {} vec4 FMAs", plan.groups, wg,
                         timing.target_iterations, plan.fma_chains, kFmaUnroll);
  return m;
}

// A kernel whose one constant is its workgroup size: the copy and cache rows'.
kernels::LaunchShape sized_shape(const DeviceInfo& info, const char* shader) {
  kernels::LaunchShape shape;
  shape.shader = shader;
  shape.constants = {{"WG", workgroup_size(info)}};
  return shape;
}
constexpr const char* kCopyShader = "peak_copy_f32";
constexpr const char* kCacheShader = "peak_cache_i32";

PeakMeasurement measure_copy(const PeakContext& e, const PeakLoad& plan) {
  const DeviceInfo& info = e.physical.info;
  PeakMeasurement m = unavailable("copy", "GB/s", "");
  vk::AllocatedBuffer src = e.create_buffer(plan.copy_bytes, "vkgemm peak copy source");
  vk::AllocatedBuffer dst = e.create_buffer(plan.copy_bytes, "vkgemm peak copy destination");
  e.fill(src, 0, plan.copy_bytes, 0x3f800000u);
  const uint32_t wg = workgroup_size(info);
  const uint64_t vec4s = plan.copy_bytes / 16;
  PeakKernel k;
  k.shape = sized_shape(info, kCopyShader);
  // One vec4 per invocation where the grid allows (lavapipe runs the grid-stride loop 3-5x slower).
  k.groups = static_cast<uint32_t>(std::min<uint64_t>((vec4s + wg - 1) / wg, info.max_workgroup_count[0]));
  k.src = {src.buffer.get(), 0, plan.copy_bytes};
  k.dst = {dst.buffer.get(), 0, plan.copy_bytes};
  k.push.M = static_cast<uint32_t>(vec4s);
  // No loop to grow (max_iterations 1): the same probe, then warm_ms of copies, then the timed ones.
  const auto timing = detail::peak::calibrate_and_time(e, k, plan.target_ms, plan.warm_ms, plan.repeat, 1);
  finish(m, timing.gpu_ms, 2.0 * double(plan.copy_bytes));
  m.detail = fmt::format("{} MiB read and {} MiB written by {} workgroups of {}", plan.copy_bytes >> 20,
                         plan.copy_bytes >> 20, k.groups, wg);
  return m;
}

PeakMeasurement measure_cache(const PeakContext& e, const PeakLoad& plan) {
  const DeviceInfo& info = e.physical.info;
  PeakMeasurement m = unavailable("cache read", "GB/s", "");
  const uint64_t bytes = std::min(kCacheBytes, std::bit_floor(plan.copy_bytes));
  vk::AllocatedBuffer src = e.create_buffer(bytes, "vkgemm peak cache source");
  e.fill(src, 0, bytes, 0x3f800000u);
  const uint32_t wg = workgroup_size(info);
  vk::AllocatedBuffer dst = e.create_buffer(uint64_t{plan.groups} * wg * 16, "vkgemm peak cache result");
  PeakKernel k = detail::peak::cache_kernel(info, plan.groups, bytes);
  k.src = {src.buffer.get(), 0, bytes};
  k.dst = {dst.buffer.get(), 0, VK_WHOLE_SIZE};
  const auto timing = detail::peak::calibrate_and_time(e, k, plan.target_ms, plan.warm_ms, plan.repeat, kMaxIterations);
  const double reads = double(plan.groups) * wg * kCacheUnroll * timing.target_iterations;
  finish(m, timing.gpu_ms, 16.0 * reads);
  m.iterations = timing.target_iterations;
  m.detail = fmt::format("a {} KiB buffer read by {} workgroups of {}, {} passes of {} 16-byte reads each", bytes >> 10,
                         plan.groups, wg, timing.target_iterations, kCacheUnroll);
  return m;
}

std::string shape_name(const CooperativeMatrixShape& s) {
  return fmt::format("coopmat {}x{}x{} {}*{}+{}", s.m, s.n, s.k, s.a_type, s.b_type, s.c_type);
}

// The MMA kernels' shader for a shape's types (peak_coopmat.comp's variants), the unit of their rate and
// the bytes of an input and an accumulator element.
struct MmaTypes {
  const char* a_b;    // A and B, as DeviceInfo names them
  const char* c;      // C and the result
  const char* shader;
  const char* unit;
  uint32_t in_bytes, acc_bytes;
};
constexpr MmaTypes kMmaTypes[] = {
    {"f16", "f32", "peak_coopmat_f16_f32", "TFLOP/s", 2, 4},
    {"f16", "f16", "peak_coopmat_f16_acc16", "TFLOP/s", 2, 2},
    {"i8", "i32", "peak_coopmat_s8_s32", "TOP/s", 1, 4},
    {"u8", "u32", "peak_coopmat_u8_u32", "TOP/s", 1, 4},
    {"bf16", "f32", "peak_coopmat_bf16_f32", "TFLOP/s", 2, 4},
};

const MmaTypes* mma_types(const CooperativeMatrixShape& s) {
  if (s.a_type != s.b_type || s.c_type != s.result_type || s.saturating) return nullptr;
  for (const MmaTypes& t : kMmaTypes) {
    if (s.a_type == t.a_b && s.c_type == t.c) return &t;
  }
  return nullptr;
}

// Why this build or device cannot run the MMA kernel on shape `s`; empty when it can.
std::string coopmat_refusal(const DeviceInfo& info, const CooperativeMatrixShape& s) {
  if (s.scope != "subgroup") return fmt::format("not measured: {} scope (only subgroup scope is)", s.scope);
  const MmaTypes* t = mma_types(s);
  if (s.a_type == "bf16" && !VKGEMM_GLSLANG_BFLOAT16) {
    return "not measured: the glslang this build used lacks GL_EXT_bfloat16, which bf16 fragments need (a newer "
           "glslang has it)";
  }
  if (!t) {
    return "not measured: only f16 A and B with an f16 or f32 C, bf16 A and B with an f32 C, and i8 or u8 A and B "
           "with a 32-bit C of their sign, are";
  }
  if (!info.vulkan13) return "not available: the shader needs Vulkan 1.3 (SPIR-V 1.6)";
  if (t->in_bytes == 2 && !info.storage16) return "not available: the device has no storageBuffer16BitAccess";
  if (!info.float16) return "not available: the device has no shaderFloat16";
  if (t->in_bytes == 1 && !info.int8) return "not available: the device has no shaderInt8";
  if (s.a_type == "bf16" && !info.bfloat16_coopmat) return "not available: the device has no shaderBFloat16CooperativeMatrix";
  return {};
}

// The MMA kernels' input: A and B filled with small values (2^-5 as f16 or bf16, whose products stay normal;
// bytes of 1), sized for peak_coopmat.comp's layout of each type.
vk::AllocatedBuffer mma_input(const PeakContext& e, const CooperativeMatrixShape& s, const MmaTypes& t) {
  const uint64_t bytes = t.in_bytes == 1 ? uint64_t{s.m + s.k} * 64  // rows of 64 bytes (PEAK_INT8)
                                         : uint64_t{s.m} * s.k * 2 + uint64_t{s.k} * s.n * 2 + 4;
  vk::AllocatedBuffer in = e.create_buffer(bytes, "vkgemm peak coopmat in");
  const uint32_t pattern = t.in_bytes == 1 ? 0x01010101u : std::string_view(t.a_b) == "bf16" ? 0x3d003d00u : 0x28002800u;
  e.fill(in, 0, (in.size / 4) * 4, pattern);
  return in;
}

uint32_t mma_subgroups(const DeviceInfo& info) {
  return std::max(1u, std::min(4u, info.max_workgroup_invocations / info.subgroup_size));
}
bool mma_subgroup_control(const DeviceInfo& info) {
  const uint32_t sg = info.subgroup_size;
  return info.subgroup_size_control && sg >= info.min_subgroup_size && sg <= info.max_subgroup_size;
}

// The MMA kernel's pipeline for shape `s` (coopmat_refusal(info, s) empty).
kernels::LaunchShape coopmat_shape(const DeviceInfo& info, const CooperativeMatrixShape& s) {
  const uint32_t sg = info.subgroup_size;
  kernels::LaunchShape shape;
  shape.shader = mma_types(s)->shader;
  // VARY_A on: A is rescaled (by 1) each step, so no driver can hoist A * B out of the loop.
  shape.constants = {{"WG", sg * mma_subgroups(info)}, {"TM", s.m}, {"TN", s.n}, {"TK", s.k}, {"SG", sg}, {"VARY_A", 1}};
  // Full subgroups of the size the shape was listed for.
  if (mma_subgroup_control(info)) shape.required_subgroup_size = sg;
  return shape;
}

// Times MMA kernel `k` on shape `s` (its input from mma_input, one fragment of C out per subgroup, the push
// constants' scalar 1) over plan.groups workgroups of `subgroups`, each running `mmas_per_iteration` MMAs an
// iteration, into m's value and iterations.
void time_mma(const PeakContext& e, const PeakLoad& plan, PeakKernel k, const CooperativeMatrixShape& s, uint32_t subgroups,
              double mmas_per_iteration, PeakMeasurement& m) {
  const MmaTypes& t = *mma_types(s);
  const float one = 1.0f;
  std::memcpy(k.push.scalars, &one, 4);
  k.groups = plan.groups;
  vk::AllocatedBuffer in = mma_input(e, s, t);
  vk::AllocatedBuffer out = e.create_buffer(uint64_t{plan.groups} * subgroups * s.m * s.n * t.acc_bytes, "vkgemm peak coopmat out");
  k.src = {in.buffer.get(), 0, VK_WHOLE_SIZE};
  k.dst = {out.buffer.get(), 0, VK_WHOLE_SIZE};
  const auto timing = detail::peak::calibrate_and_time(e, k, plan.target_ms, plan.warm_ms, plan.repeat, kMaxIterations);
  const double mmas = mmas_per_iteration * timing.target_iterations * double(plan.groups) * subgroups;
  finish(m, timing.gpu_ms, 2.0 * s.m * s.n * s.k * mmas);
  m.iterations = timing.target_iterations;
}

PeakMeasurement measure_coopmat(const PeakContext& e, const PeakLoad& plan, const CooperativeMatrixShape& s) {
  const DeviceInfo& info = e.physical.info;
  const MmaTypes* t = mma_types(s);
  PeakMeasurement m = unavailable(shape_name(s), t ? t->unit : "TFLOP/s", coopmat_refusal(info, s));
  m.inputs = s.a_type;
  if (!m.reason.empty()) return m;
  const uint32_t sg = info.subgroup_size, subgroups = mma_subgroups(info);
  PeakKernel k;
  k.shape = coopmat_shape(info, s);
  kernels::spirv(k.shape.shader);  // throws, saying why, where this build has no such shader (guarded)
  const bool control = mma_subgroup_control(info);
  time_mma(e, plan, k, s, subgroups, kMmaPerIteration, m);
  m.detail = fmt::format("{} workgroups of {} subgroups of {}{}, {} iterations of {} MMAs each", plan.groups,
                         subgroups, sg, control ? " (required)" : "", m.iterations, kMmaPerIteration);
  return m;
}

// The MMA fed from shared memory (peak_coopmat_shared.comp): for fp32 and fp16 sums, on the largest f16
// subgroup shape the device lists with that C, a workgroup of 4 subgroups each loading 4 A and 4 B fragments
// from shared memory a fragment column and multiplying them into 4 x 4 accumulators, a barrier every step:
// what a kernel that stages A and B in shared memory can reach before its global loads are counted.
struct SharedFedRow {
  const char* c;
  const char* shader;
};
constexpr SharedFedRow kSharedFedRows[] = {
    {"f32", "peak_coopmat_shared_f16_f32"},
    {"f16", "peak_coopmat_shared_f16_acc16"},
};
constexpr uint32_t kSharedFedSubgroups = 4;
constexpr double kSharedFedMmaPerIteration = 4.0 * 4.0 * 2.0;  // 4 x 4 accumulators, 2 fragment columns a step

const CooperativeMatrixShape* shared_fed_fragment(const DeviceInfo& info, const SharedFedRow& r) {
  const CooperativeMatrixShape* best = nullptr;
  for (const CooperativeMatrixShape& s : info.coopmat_shapes) {
    if (s.scope != "subgroup" || s.a_type != "f16" || s.b_type != "f16" || s.c_type != r.c || s.result_type != r.c ||
        s.saturating) {
      continue;
    }
    if (!best || uint64_t{s.m} * s.n * s.k > uint64_t{best->m} * best->n * best->k) best = &s;
  }
  return best;
}

std::string shared_fed_name(const DeviceInfo& info, const SharedFedRow& r) {
  const CooperativeMatrixShape* s = shared_fed_fragment(info, r);
  return s ? fmt::format("{} (subgroup, from shared memory)", shape_name(*s))
           : fmt::format("coopmat f16*f16+{} (subgroup, from shared memory)", r.c);
}

// The shader's shared memory: two steps of A (8 TM rows of 2 TK + 8 halves) and B (2 TK rows of 8 TN + 8).
uint64_t shared_fed_bytes(const CooperativeMatrixShape& s) {
  return 2 * 2 * (uint64_t{8} * s.m * (2 * s.k + 8) + uint64_t{2} * s.k * (8 * s.n + 8));
}

std::string shared_fed_refusal(const DeviceInfo& info, const SharedFedRow& r) {
  const CooperativeMatrixShape* s = shared_fed_fragment(info, r);
  if (!s) return fmt::format("not available: the device lists no subgroup-scope f16*f16+{} shape", r.c);
  if (std::string why = coopmat_refusal(info, *s); !why.empty()) return why;
  if (kSharedFedSubgroups * info.subgroup_size > info.max_workgroup_invocations) {
    return fmt::format("not available: a workgroup of {} subgroups of {} is past the device's {} invocations",
                       kSharedFedSubgroups, info.subgroup_size, info.max_workgroup_invocations);
  }
  if (shared_fed_bytes(*s) > info.max_shared_memory) {
    return fmt::format("not available: {} bytes of shared memory for the {}x{}x{} shape, past the device's {}",
                       shared_fed_bytes(*s), s->m, s->n, s->k, info.max_shared_memory);
  }
  return {};
}

// The pipeline of row `r` (shared_fed_refusal(info, r) empty).
kernels::LaunchShape shared_fed_launch(const DeviceInfo& info, const SharedFedRow& r) {
  const CooperativeMatrixShape& s = *shared_fed_fragment(info, r);
  const uint32_t sg = info.subgroup_size;
  kernels::LaunchShape shape;
  shape.shader = r.shader;
  shape.constants = {{"WG", sg * kSharedFedSubgroups}, {"TM", s.m}, {"TN", s.n}, {"TK", s.k}, {"SG", sg}};
  if (mma_subgroup_control(info)) shape.required_subgroup_size = sg;
  return shape;
}

PeakMeasurement measure_shared_fed(const PeakContext& e, const PeakLoad& plan, const SharedFedRow& r) {
  const DeviceInfo& info = e.physical.info;
  PeakMeasurement m = unavailable(shared_fed_name(info, r), "TFLOP/s", shared_fed_refusal(info, r));
  m.inputs = "f16";
  if (!m.reason.empty()) return m;
  const CooperativeMatrixShape& s = *shared_fed_fragment(info, r);
  PeakKernel k;
  k.shape = shared_fed_launch(info, r);
  kernels::spirv(k.shape.shader);  // throws, saying why, where this build has no such shader (guarded)
  time_mma(e, plan, k, s, kSharedFedSubgroups, kSharedFedMmaPerIteration, m);  // scalar 1: the steps in turn
  m.detail = fmt::format("{} workgroups of {} subgroups of {}, each {}x{} of C in 4x4 fragments; {} iterations of "
                         "{} MMAs, their fragments loaded from shared memory, a barrier each", plan.groups,
                         kSharedFedSubgroups, info.subgroup_size, 4 * s.m, 4 * s.n, m.iterations,
                         kSharedFedMmaPerIteration);
  return m;
}

// The coopmat2 kernel's large tiles (kernels/coopmat_config.cpp): 128x256 with fp32 sums, 256x256 with fp16
// sums, K steps of 64 and 32, 256 invocations; the workgroup-scope MMA rate is measured on them, alone and
// fed by loads of A and B every step (`loads`: what the kernel's loop can reach with every load a cache hit).
struct Nv2PeakTile {
  const char* c;
  const char* shader;
  uint32_t bm, bn, bk, invocations, acc_bytes;
  bool loads;
};
constexpr Nv2PeakTile kNv2PeakTiles[] = {
    {"f32", "peak_coopmat2_f16_f32", 128, 256, 64, 256, 4, false},
    {"f16", "peak_coopmat2_f16_acc16", 256, 256, 32, 256, 2, false},
    {"f32", "peak_coopmat2_loads_f16_f32", 128, 256, 64, 256, 4, true},
    {"f16", "peak_coopmat2_loads_f16_acc16", 256, 256, 32, 256, 2, true},
};

std::string nv2_name(const Nv2PeakTile& t) {
  return fmt::format("coopmat2 {}x{}x{} f16*f16+{} (workgroup{})", t.bm, t.bn, t.bk, t.c, t.loads ? ", loaded" : "");
}

// Whether the device lists a workgroup-scope f16 shape with this C that the tile is made of.
bool nv2_lists(const DeviceInfo& info, const Nv2PeakTile& t) {
  return std::any_of(info.coopmat2_shapes.begin(), info.coopmat2_shapes.end(), [&](const CooperativeMatrixShape& s) {
    return s.scope == "workgroup" && s.a_type == "f16" && s.b_type == "f16" && s.c_type == t.c &&
           s.result_type == t.c && !s.saturating && s.m && s.n && s.k && t.bm % s.m == 0 && t.bn % s.n == 0 &&
           t.bk % s.k == 0 && (s.workgroup_invocations == 0 || s.workgroup_invocations == t.invocations);
  });
}

std::string nv2_refusal(const DeviceInfo& info, const Nv2PeakTile& t) {
  if (nv2_lists(info, t) && t.invocations <= info.coopmat2_max_workgroup_invocations) return {};
  return fmt::format("not available: the device lists no workgroup-scope f16*f16+{} shape for a {}x{}x{} tile of {} "
                     "invocations", t.c, t.bm, t.bn, t.bk, t.invocations);
}

kernels::LaunchShape coopmat2_shape(const Nv2PeakTile& t) {
  kernels::LaunchShape shape;
  shape.shader = t.shader;
  // VARY_A on: A is rescaled (by 1) once a loop iteration of 8 MMAs, so no driver can hoist A * B out of the
  // loop (the loaded rows' shader reloads A and B instead and leaves the constant unused).
  shape.constants = {{"WG", t.invocations}, {"BM", t.bm}, {"BN", t.bn}, {"BK", t.bk}, {"VARY_A", 1}};
  return shape;
}

PeakMeasurement measure_coopmat2(const PeakContext& e, const PeakLoad& plan, const Nv2PeakTile& t) {
  const DeviceInfo& info = e.physical.info;
  PeakMeasurement m = unavailable(nv2_name(t), "TFLOP/s", nv2_refusal(info, t));
  if (!m.reason.empty()) return m;
  PeakKernel k;
  k.shape = coopmat2_shape(t);
  kernels::spirv(k.shape.shader);  // throws, saying why, where this build has no such shader (guarded)
  const float one = 1.0f;
  std::memcpy(k.push.scalars, &one, 4);
  k.groups = plan.groups;
  vk::AllocatedBuffer in = e.create_buffer(uint64_t{t.bm + t.bn} * t.bk * 2, "vkgemm peak coopmat2 in");
  e.fill(in, 0, in.size, 0x28002800u);  // every half 2^-5: products stay normal
  vk::AllocatedBuffer out = e.create_buffer(uint64_t{t.bm} * t.bn * t.acc_bytes, "vkgemm peak coopmat2 out");
  k.src = {in.buffer.get(), 0, VK_WHOLE_SIZE};
  k.dst = {out.buffer.get(), 0, VK_WHOLE_SIZE};
  const auto timing = detail::peak::calibrate_and_time(e, k, plan.target_ms, plan.warm_ms, plan.repeat, kMaxIterations);
  const double mmas = kNv2MmaPerIteration * timing.target_iterations * double(plan.groups);
  finish(m, timing.gpu_ms, 2.0 * t.bm * t.bn * t.bk * mmas);
  m.iterations = timing.target_iterations;
  m.detail = fmt::format("{} workgroups of {}, {} iterations of {} MMAs each{}", plan.groups, t.invocations,
                         timing.target_iterations, kNv2MmaPerIteration,
                         t.loads ? ", A and B loaded before each" : "");
  return m;
}

// int8 dot products: 8 operations (4 multiplies, 4 adds) per packed dot, as integer throughput is counted.
kernels::LaunchShape dot_shape(const DeviceInfo& info, const PeakLoad& plan) {
  kernels::LaunchShape shape;
  shape.shader = "peak_dot_i32";
  shape.constants = {{"WG", workgroup_size(info)}, {"CHAINS", plan.fma_chains}};
  return shape;
}

PeakMeasurement measure_dot(const PeakContext& e, const PeakLoad& plan) {
  const DeviceInfo& info = e.physical.info;
  PeakMeasurement m = unavailable(kDotRow, "TOP/s", "");
  if (!info.integer_dot) {
    m.reason = "not available: the device has no shaderIntegerDotProduct (VK_KHR_shader_integer_dot_product, Vulkan 1.3)";
    return m;
  }
  const uint32_t wg = workgroup_size(info);
  PeakKernel k;
  k.shape = dot_shape(info, plan);
  kernels::spirv(k.shape.shader);  // throws, saying why, where this build has no such shader (guarded)
  k.groups = plan.groups;
  vk::AllocatedBuffer out = e.create_buffer(uint64_t{plan.groups} * wg * 4, "vkgemm peak dot");
  k.src = k.dst = {out.buffer.get(), 0, VK_WHOLE_SIZE};
  const uint32_t bytes = 0x01ff01ffu;  // 1, -1, 1, -1: the chains stay small
  std::memcpy(k.push.scalars, &bytes, 4);
  const auto timing = detail::peak::calibrate_and_time(e, k, plan.target_ms, plan.warm_ms, plan.repeat, kMaxIterations);
  const double dots = plan.fma_chains * kFmaUnroll * timing.target_iterations * double(plan.groups) * wg;
  finish(m, timing.gpu_ms, 8.0 * dots);
  m.iterations = timing.target_iterations;
  m.detail = fmt::format("{} workgroups of {}, {} iterations of {} chains x {} packed dots", plan.groups, wg,
                         timing.target_iterations, plan.fma_chains, kFmaUnroll);
  return m;
}

// measure() or, where the engine refuses (memory it cannot allocate, a pipeline the driver will not build),
// a row that says so: one measurement's failure is not the others'.
template <typename Measure>
PeakMeasurement guarded(const char* name, const char* unit, Measure measure) {
  try {
    return measure();
  } catch (const Error& e) {
    if (e.code() == ErrorCode::device_lost) throw;  // nothing after it would run either
    return unavailable(name, unit, fmt::format("not available: {}", e.what()));
  }
}

// One host-copy row: `copy` run once untimed (the staging ring's making, the pages' first touch), then
// `repeat` times, each timed on the host's clock from the call to its completion: a copy between host memory
// and the device is the host's work as much as the device's, and no GPU timestamp spans it.
template <typename Copy>
PeakMeasurement time_host_copy(std::string name, uint64_t bytes, uint32_t repeat, Copy&& copy) {
  using clock = std::chrono::steady_clock;
  PeakMeasurement m = unavailable(std::move(name), "GB/s", "");
  copy();
  std::vector<double> wall_ms;
  for (uint32_t r = 0; r < repeat; ++r) {
    const auto start = clock::now();
    copy();
    wall_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - start).count());
  }
  m.measured = true;
  m.median_ms = detail::peak::median(wall_ms);
  m.work = double(bytes);
  m.value = m.median_ms > 0.0 ? double(bytes) / (m.median_ms * 1e-3) * 1e-9 : 0.0;
  m.detail = fmt::format("{} MiB of pageable host memory, host wall time of a call (no GPU times)", bytes >> 20);
  return m;
}

// The host's copies across the bus (design/host-copies.md): the copy buffer's size of pageable host memory into
// a storage buffer (upload) and back (download), through the staging ring and through the host's pages
// imported, whatever the engine's own choice for that size would be.
void add_host_copy_rows(const PeakContext& e, const PeakLoad& plan, std::vector<PeakMeasurement>& rows) {
  const DeviceInfo& info = e.physical.info;
  const uint64_t bytes = plan.copy_bytes;
  const vk::AllocatedBuffer alloc = e.create_buffer(bytes, "vkgemm peak host copies");
  std::vector<std::byte> host(bytes, std::byte{1});
  for (const auto& [path, way] : {std::pair{detail::HostCopyPath::staging, "staged"},
                                  std::pair{detail::HostCopyPath::import, "imported"}}) {
    const std::string up = fmt::format("host upload ({})", way), down = fmt::format("host download ({})", way);
    detail::HostCopies copies(*e.device, *e.memory, *e.submitter, info, {path, 0});
    if (path == detail::HostCopyPath::import && copies.stages()) {  // the device cannot import
      const std::string why = info.host_import ? "not available: the device's import alignment exceeds the page size"
                                               : "not available: the device has no VK_EXT_external_memory_host";
      rows.push_back(unavailable(up, "GB/s", why));
      rows.push_back(unavailable(down, "GB/s", why));
      continue;
    }
    rows.push_back(guarded(up.c_str(), "GB/s", [&] {
      return time_host_copy(up, bytes, plan.repeat, [&] { copies.upload(host.data(), bytes, alloc, 0); });
    }));
    rows.push_back(guarded(down.c_str(), "GB/s", [&] {
      return time_host_copy(down, bytes, plan.repeat, [&] { copies.download(alloc, 0, host.data(), bytes); });
    }));
    if (copies.counts().refused) {  // staged after all: not what the rows name
      for (size_t i = rows.size() - 2; i < rows.size(); ++i) {
        rows[i] = unavailable(rows[i].name, "GB/s", "not available: the driver refused to import the host's pages");
      }
    }
  }
}

void add_coopmat_rows(const PeakContext& e, const PeakLoad& plan, std::vector<PeakMeasurement>& rows) {
  const DeviceInfo& info = e.physical.info;
  if (!info.coopmat_khr || info.coopmat_shapes.empty()) {
    rows.push_back(unavailable("coopmat", "TFLOP/s", "not available: the device has no VK_KHR_cooperative_matrix"));
  }
  if (info.coopmat_khr) {
    for (const auto& s : info.coopmat_shapes) {
      const std::string name = shape_name(s);
      const MmaTypes* t = mma_types(s);
      rows.push_back(guarded(name.c_str(), t ? t->unit : "TFLOP/s", [&] { return measure_coopmat(e, plan, s); }));
    }
    for (const SharedFedRow& r : kSharedFedRows) {
      const std::string name = shared_fed_name(info, r);
      rows.push_back(guarded(name.c_str(), "TFLOP/s", [&] { return measure_shared_fed(e, plan, r); }));
    }
  }
  if (!info.coopmat2) {
    rows.push_back(unavailable("coopmat2", "TFLOP/s", "not available: the device has no VK_NV_cooperative_matrix2"));
    return;
  }
  for (const Nv2PeakTile& t : kNv2PeakTiles) {
    const std::string name = nv2_name(t);
    rows.push_back(guarded(name.c_str(), "TFLOP/s", [&] { return measure_coopmat2(e, plan, t); }));
  }
}

// Whether this build has the shader (a missing one is its row's reason, when measured).
bool built_in(const kernels::LaunchShape& shape) {
  try {
    kernels::spirv(shape.shader);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The pipelines of every row the device can run, by the measurements' own rules and shapes.
std::vector<kernels::LaunchShape> peak_shapes(const DeviceInfo& info, const PeakLoad& plan) {
  std::vector<kernels::LaunchShape> out;
  for (const FmaRow& row : kFmaRows) {
    if (fma_refusal(info, row).empty()) out.push_back(fma_shape(info, plan, row));
  }
  if (info.integer_dot) out.push_back(dot_shape(info, plan));
  if (info.coopmat_khr) {
    for (const auto& s : info.coopmat_shapes) {
      if (coopmat_refusal(info, s).empty()) out.push_back(coopmat_shape(info, s));
    }
    for (const SharedFedRow& r : kSharedFedRows) {
      if (shared_fed_refusal(info, r).empty()) out.push_back(shared_fed_launch(info, r));
    }
  }
  if (info.coopmat2) {
    for (const Nv2PeakTile& t : kNv2PeakTiles) {
      if (nv2_refusal(info, t).empty()) out.push_back(coopmat2_shape(t));
    }
  }
  out.push_back(sized_shape(info, kCopyShader));
  out.push_back(sized_shape(info, kCacheShader));
  std::erase_if(out, [](const kernels::LaunchShape& shape) { return !built_in(shape); });
  return out;
}

// The emulated rows: each type's name (its default moduli are counted; the span guard's magnitude product, which
// runs only where the lines' levels do not decide, is not: a ceiling no input passes).
struct EmulationRow {
  const char* name;
  DataType type;
};
constexpr EmulationRow kEmulationRows[] = {
    {"f64 emulated (ozaki)", DataType::f64},
    {"f32 emulated (ozaki)", DataType::f32},
};

// Where the emulated rows go: after the FMA rows (f32, f16, f64), beside the native ceilings they stand against.
void insert_emulation_rows(const DeviceInfo& info, std::vector<PeakMeasurement>& rows) {
  const auto after = std::find_if(rows.begin(), rows.end(), [](const PeakMeasurement& m) { return m.name == "f64 FMA"; });
  const auto at = after == rows.end() ? rows.begin() : after + 1;
  std::vector<PeakMeasurement> emulated = emulation_rows(info, rows);
  rows.insert(at, emulated.begin(), emulated.end());
}

}  // namespace

namespace detail::peak {

PeakKernel cache_kernel(const DeviceInfo& info, uint32_t groups, uint64_t bytes) {
  const uint32_t wg = workgroup_size(info);
  const uint64_t vec4s = std::bit_floor(bytes / 16);
  if (vec4s < 4ull * wg || vec4s > (1ull << 31)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("peak cache row: {} bytes is not 4 to 2^31 workgroups' reads of 16 bytes", bytes));
  }
  PeakKernel k;
  k.shape = sized_shape(info, kCacheShader);
  k.groups = groups;
  k.push.M = static_cast<uint32_t>(vec4s);
  // An odd number of workgroup-sized blocks between an invocation's reads: each workgroup walks every block
  // before it comes back to one (peak_cache.comp).
  const uint64_t blocks = vec4s / wg;
  k.push.N = static_cast<uint32_t>(wg * (blocks / 2 + 1 + (blocks / 2) % 2));
  return k;
}

size_t prepare_pipelines(const PeakContext& e, const PeakOptions& options) {
  try {
    return e.pipelines->prepare(peak_shapes(e.physical.info, plan_for(e.physical.info, options)), 0);
  } catch (const Error& err) {
    if (err.code() == ErrorCode::device_lost) throw;
    return 0;  // the refused pipeline's row says why when it is measured; the others were built
  }
}

}  // namespace detail::peak

std::vector<PeakMeasurement> emulation_rows(const DeviceInfo& info, const std::vector<PeakMeasurement>& rows) {
  const PeakMeasurement* source = nullptr;  // the fastest measured int8 matrix-unit row
  for (const PeakMeasurement& m : rows) {
    if (m.measured && m.inputs == "i8" && m.value > 0.0 && (!source || m.value > source->value)) source = &m;
  }
  std::vector<PeakMeasurement> out;
  for (const EmulationRow& row : kEmulationRows) {
    PeakMeasurement m = unavailable(row.name, "TFLOP/s", "");
    if (!info.float64 || !info.storage8) {
      m.reason = "not available: the ozaki kernel needs shaderFloat64 and storageBuffer8BitAccess";
    } else if (!source) {
      m.reason = "not available: no int8 matrix-unit row (coopmat or coopmat2, i8*i8+i32) was measured; the "
                 "emulation's int8 products would run on tiled";
    } else {
      m.products = ozaki::default_moduli(row.type, 0);
      m.derived_from = source->name;
      m.value = source->value / m.products;
      m.detail = fmt::format("derived, not timed: {} ({:.3f} TOP/s) / {} int8 products ({}'s default moduli)",
                             source->name, source->value, m.products, to_string(row.type));
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<PeakMeasurement> detail::peak::measure(const PeakContext& e, const PeakOptions& options) {
  const DeviceInfo& info = e.physical.info;
  const PeakLoad plan = plan_for(info, options);
  std::vector<PeakMeasurement> rows;
  if (!info.timestamps) {
    const std::string why = "not available: the device's compute queue has no timestamps";
    for (const FmaRow& row : kFmaRows) rows.push_back(unavailable(row.name, "TFLOP/s", why));
    for (const char* name : {"coopmat", "coopmat2"}) rows.push_back(unavailable(name, "TFLOP/s", why));
    rows.push_back(unavailable(kDotRow, "TOP/s", why));
    rows.push_back(unavailable("copy", "GB/s", why));
    rows.push_back(unavailable("cache read", "GB/s", why));
    add_host_copy_rows(e, plan, rows);  // timed on the host's clock
    insert_emulation_rows(info, rows);
    return rows;
  }
  detail::peak::prepare_pipelines(e, options);
  for (const FmaRow& row : kFmaRows) {
    rows.push_back(guarded(row.name, "TFLOP/s", [&] { return measure_fma(e, plan, row); }));
  }
  rows.push_back(guarded(kDotRow, "TOP/s", [&] { return measure_dot(e, plan); }));
  add_coopmat_rows(e, plan, rows);
  rows.push_back(guarded("copy", "GB/s", [&] { return measure_copy(e, plan); }));
  rows.push_back(guarded("cache read", "GB/s", [&] { return measure_cache(e, plan); }));
  add_host_copy_rows(e, plan, rows);
  insert_emulation_rows(info, rows);
  return rows;
}

}  // namespace vkgemm
