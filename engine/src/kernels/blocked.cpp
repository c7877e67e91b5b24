// The register-blocked kernel (shaders/blocked.comp): f32 and f64, every op combination (the transposes are
// specialization constants: one pipeline per combination, each reading its operands by vec4 along their
// contiguous dimension), configured by a BlockedConfig (the caller's, else the tuning table's nearest, else
// the fallback), split along K into a workspace summed by shaders/splitk_reduce.comp when the output has too
// few blocks to fill the device.
#include <algorithm>

#include <fmt/format.h>

#include "gemm_abi.h"
#include "kernels/blocked_choice.hpp"
#include "kernels/check_count.hpp"
#include "kernels/kernel_spec.hpp"
#include "kernels/push_constants.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {


constexpr DataType kInputs[] = {DataType::f32, DataType::f64};

uint32_t blocked_threads(const BlockedConfig& c) { return (c.bm / c.tm) * (c.bn / c.tn); }

// vec4s of padding per row of the shared A and B tiles.
struct Padding {
  uint32_t a = 0, b = 0;
};

uint32_t blocked_shared_bytes(const BlockedConfig& c, DataType type, Padding pad) {
  const uint32_t vec = 4 * static_cast<uint32_t>(element_size(type));
  return 2 * (c.bk * (c.bm / 4 + pad.a) + c.bk * (c.bn / 4 + pad.b)) * vec;
}

// One vec4 of row padding (against bank conflicts) for each tile the kernel writes scattered, its vec4s read
// along K: A untransposed, B transposed. None where the padding would not fit, so the unpadded size is what
// a configuration needs (check_blocked_config).
Padding blocked_padding(const DeviceInfo& device, const BlockedConfig& c, DataType type, bool trans_a,
                        bool trans_b) {
  const Padding want{trans_a ? 0u : 1u, trans_b ? 1u : 0u};
  return blocked_shared_bytes(c, type, want) <= device.max_shared_memory ? want : Padding{};
}

std::string describe(const BlockedConfig& c, uint32_t splits) {
  BlockedConfig d = c;
  d.split_k = splits;
  return to_string(d);
}

// The configuration and split count for a problem (blocked_choice.hpp). A piece of a partitioned product
// has its configuration and split pinned (pin below): taken as they are, nothing is chosen again.
BlockedConfig choose(const LaunchContext& ctx, const Problem& p) {
  if (ctx.options.blocked.chosen() && ctx.options.blocked.split_k != 0) return ctx.options.blocked;
  return choose_blocked(ctx.device, ctx.table, ctx.options, ctx.types.input,
                        {p.m, p.n, p.k, p.batch, p.trans_a, p.trans_b}).config;
}

// Every shape and op combination of f32 and f64.
std::vector<GemmOptions> candidates(const LaunchContext& ctx, const Problem& /*problem*/) {
  const DataType type = ctx.types.input;
  if (type != DataType::f32 && type != DataType::f64) return {};
  GemmOptions o = ctx.options;
  o.kernel = Kernel::blocked;
  return {o};
}

// The caller's configuration must fit the device. An unchosen one is chosen (choose_blocked) among the
// tuning table's configurations that fit the device, else it is the fallback, which then must fit; so
// whatever a product's shape chooses fits where this passes, and launch checks nothing again.
void check(const LaunchContext& ctx) {
  const DataType type = ctx.types.input;
  const BlockedConfig& asked = ctx.options.blocked;
  if (asked.chosen()) return check_blocked_config(ctx.device, type, asked);
  if (asked.split_k > kMaxBlockedSplits) {
    throw Error(ErrorCode::invalid_argument, fmt::format("blocked configuration: split_k {}: split_k must be at most {}",
                                                         asked.split_k, kMaxBlockedSplits));
  }
  if (!has_measured_blocked(ctx.device, ctx.table, type)) {
    check_blocked_config(ctx.device, type, fallback_blocked_config(type));
  }
}

// vec4 access where every leading dimension, offset and batch stride of an operand allows it. The same rule
// for a transposed operand: its vec4s run along the stored rows (k for A, n for B untransposed; m for A, k
// for B transposed), whose starts the kernel keeps at multiples of 4 (bm, bn and bk are).
uint32_t vec_flags(const Problem& p, uint32_t splits) {
  const bool vec_a = p.lda % 4 == 0 && p.a_offset % 4 == 0 && p.stride_a % 4 == 0;
  const bool vec_b = p.ldb % 4 == 0 && p.b_offset % 4 == 0 && p.stride_b % 4 == 0;
  // With a split, C is the workspace: offset 0, row stride n, slices m * n apart.
  const bool vec_c = splits > 1 ? p.n % 4 == 0 && (uint64_t{p.m} * p.n) % 4 == 0
                                : (p.ldc % 4 == 0 && p.c_offset % 4 == 0 && p.stride_c % 4 == 0);
  return (vec_a ? kVecA : 0) | (vec_b ? kVecB : 0) | (vec_c ? kVecC : 0);
}

KernelLaunch launch(const LaunchContext& ctx, const Problem& p) {
  const DataType type = ctx.types.input;
  const BlockedConfig c = choose(ctx, p);  // fits: check above
  KernelLaunch out;
  out.kernel = Kernel::blocked;
  out.blocked = c;
  const uint32_t wanted = std::clamp(c.split_k, 1u, std::max(1u, p.k / c.bk));
  // Slices of whole K steps; the last may be shorter, none is empty.
  const uint32_t steps = (p.k + c.bk - 1) / c.bk;
  out.k_split = std::max(1u, ((steps + wanted - 1) / wanted) * c.bk);
  out.splits = p.k == 0 ? 1 : (p.k + out.k_split - 1) / out.k_split;
  const uint32_t threads = blocked_threads(c);
  const Padding pad = blocked_padding(ctx.device, c, type, p.trans_a, p.trans_b);
  out.main.shader = shader_name(Kernel::blocked, ctx.types);
  out.main.constants = {{"BM", c.bm},
                        {"BN", c.bn},
                        {"BK", c.bk},
                        {"TM", c.tm},
                        {"TN", c.tn},
                        {"LANES_N", c.lanes_n},
                        {"THREADS", threads},
                        {"GROUP_M", c.group_m},
                        {"A_PAD", pad.a},
                        {"TRANS_A", p.trans_a ? 1u : 0u},
                        {"TRANS_B", p.trans_b ? 1u : 0u},
                        {"B_PAD", pad.b}};
  out.flags = vec_flags(p, out.splits);
  out.main.workgroup_size = {threads, 1, 1};
  out.main.shared_bytes = blocked_shared_bytes(c, type, pad);
  out.grid = {(p.n + c.bn - 1) / c.bn, (p.m + c.bm - 1) / c.bm, out.splits * p.batch};
  out.description = describe(c, out.splits);
  if (out.splits > 1) {  // partial sums in C's own type
    add_reduce(out, fmt::format("splitk_reduce_{}", to_string(type)), p.m, p.n, p.batch,
               static_cast<uint32_t>(element_size(type)));
  }
  return out;
}

Pinning pin(const KernelLaunch& whole, const DeviceInfo& device, const GemmOptions& options) {
  Pinning out{options, {}, 0};
  out.options.kernel = Kernel::blocked;
  out.options.blocked = whole.blocked;
  out.options.blocked.split_k = std::clamp(whole.splits, 1u, device.max_workgroup_count[2]);
  detail::Blocking& b = out.blocking;
  b.rows = whole.blocked.bm, b.cols = whole.blocked.bn, b.k_step = whole.blocked.bk;
  b.z_per_entry = out.options.blocked.split_k;
  pin_reduce(b, whole);
  return out;
}

}  // namespace

BlockedConfig fallback_blocked_config(DataType type) {
  // 64 x 64 blocks of 8 x 4 per invocation: 128 invocations (Vulkan's minimum limit) and 8.25 KiB of
  // shared memory for f32; f64 needs 16.5 KiB, just over the 16 KiB minimum (auto then takes tiled).
  (void)type;
  return {.bm = 64, .bn = 64, .bk = 8, .tm = 8, .tn = 4, .lanes_n = 8, .split_k = 0, .group_m = 1};
}

void check_blocked_config(const DeviceInfo& device, DataType type, const BlockedConfig& c) {
  detail::count_check(detail::Checked::blocked_config);
  check_blocked_rules(device, type, c);
}

bool blocked_config_fits(const DeviceInfo& device, DataType type, const BlockedConfig& c) noexcept {
  try {
    check_blocked_rules(device, type, c);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void check_blocked_rules(const DeviceInfo& device, DataType type, const BlockedConfig& c) {
  const auto bad = [&](const std::string& rule) {
    throw Error(ErrorCode::invalid_argument, fmt::format("blocked configuration {}: {}", describe(c, c.split_k), rule));
  };
  if (!c.bm || !c.bn || !c.bk || !c.tm || !c.tn || !c.lanes_n) bad("every parameter must be positive");
  if (c.tm % 4 || c.tn % 4 || c.bk % 4) bad("tm, tn and bk must be multiples of 4");
  if (c.bm % c.tm || c.bn % c.tn) bad("bm must be a multiple of tm and bn of tn");
  const uint32_t threads = blocked_threads(c);
  if (threads % 32) bad(fmt::format("(bm/tm)*(bn/tn) = {} invocations must be a multiple of 32", threads));
  if (32 % c.lanes_n || (c.bn / c.tn) % c.lanes_n || (c.bm / c.tm) % (32 / c.lanes_n)) {
    bad("lanes_n must divide 32 and bn/tn, and 32/lanes_n must divide bm/tm");
  }
  // The same counts for every op: a transposed operand's tile holds as many vec4s, laid the other way.
  if ((c.bm * c.bk / 4) % threads || (c.bk * c.bn / 4) % threads || c.bm * c.bk / 4 < threads ||
      c.bk * c.bn / 4 < threads) {
    bad("each invocation must load whole vec4s: bm*bk/4 and bk*bn/4 must be multiples of the invocation count");
  }
  if (c.split_k > kMaxBlockedSplits) bad(fmt::format("split_k must be at most {}", kMaxBlockedSplits));
  if (c.group_m == 0 || c.group_m > 64) bad("group_m must be between 1 and 64");
  check_types_for(device, blocked_spec, Types(type));
  // The message's name formatted only for a refusal: the tuning table's entries are filtered through here.
  const uint32_t shared = blocked_shared_bytes(c, type, Padding{});
  if (threads > device.max_workgroup_invocations || threads > device.max_workgroup_size[0] ||
      device.max_workgroup_size[1] < 1 || device.max_workgroup_size[2] < 1 || shared > device.max_shared_memory) {
    check_workgroup(device, fmt::format("blocked {}", describe(c, c.split_k)), {threads, 1, 1}, shared, type);
  }
}

const KernelSpec blocked_spec{
    .kernel = Kernel::blocked,
    .inputs = kInputs,
    .computes = "computes f32 and f64",
    .reads_transposed = true,
    .auto_fallback = false,
    .from_tuning = nullptr,  // choose_blocked reads the table for the configuration
    .auto_candidates = candidates,
    .check = check,
    .launch = launch,
    .pin = pin,
};

}  // namespace vkgemm::kernels
