#include "kernels/blocked_choice.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "kernels/check_count.hpp"
#include "kernels/kernel_spec.hpp"
#include "tuning/wave_model.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/tuning.hpp"

namespace vkgemm::kernels {
namespace {

constexpr double kSplitMargin = 0.97;    // a split must promise 3% to be taken (the model is an estimate)
constexpr uint32_t kCpuWorkgroupSteps = 8000;  // a CPU device's fixed cost of a blocked workgroup (tile_model)

struct Candidate {
  BlockedConfig config;
  tuning::TileModel model;
};

bool same_kernel_config(const BlockedConfig& a, const BlockedConfig& b) {
  return a.bm == b.bm && a.bn == b.bn && a.bk == b.bk && a.tm == b.tm && a.tn == b.tn && a.lanes_n == b.lanes_n &&
         a.group_m == b.group_m;
}

// A table made for another driver or device may not fit this one's limits.
bool fits(const DeviceInfo& device, DataType type, const BlockedConfig& c) {
  return blocked_config_fits(device, type, c);
}

tuning::TileModel tile_model(const DeviceInfo& device, const BlockedConfig& c) {
  tuning::TileModel t;
  t.bm = c.bm, t.bn = c.bn;
  t.saturating = tuning::saturating_workgroups(device, (c.bm / c.tm) * (c.bn / c.tn));
  // The first tile's loads and the epilogue: about four K steps on a GPU. On a CPU device (lavapipe) a
  // workgroup runs its invocations in turn, and a 256x256 block took 4.5 to 10 ms whether K was 128 or 1024
  // (the built-in table's entries): its fixed cost is worth kCpuWorkgroupSteps steps.
  t.k_overhead = device.type == DeviceType::cpu ? kCpuWorkgroupSteps : 4 * c.bk;
  return t;
}

// Whether a measured entry's product kept at least half the device's units busy. One that did not (a small
// product, kept for its exact shape) ran on a corner of the device, bound by latency; inverted through the
// wave model it gives a unit rate no full product reaches (a 384^3 entry on 64x64 tiles once made 64x64
// look faster than 128x256 for every large square; docs/design/planner.md). The tuned entries that calibrate
// run about one workgroup a unit or more.
bool busy_half_the_units(const tuning::Machine& machine, const tuning::TileModel& model, const tuning::Entry& e) {
  const uint64_t tiles = uint64_t{(e.m + model.bm - 1) / model.bm} * ((e.n + model.bn - 1) / model.bn) *
                         std::max(1u, e.config.split_k);
  return 2 * tiles >= machine.units;
}

// Calls `take(entry, model)` for each measured blocked entry of the device's tier that fits the device and
// kept half its units busy (`model` uncalibrated), in the table's order, until `take` returns false.
template <typename Take>
void for_each_measured(const DeviceInfo& device, const tuning::Table& table, DataType type, Take&& take) {
  const tuning::DeviceTable* t = table.find(device, type).first;
  if (!t) return;
  const tuning::Machine machine = tuning::machine_of(device);
  for (const tuning::Entry& e : t->entries) {
    if (e.type != type || e.kernel != Kernel::blocked || e.gflops <= 0.0 || !fits(device, type, e.config)) continue;
    const tuning::TileModel model = tile_model(device, e.config);
    if (busy_half_the_units(machine, model, e) && !take(e, model)) return;
  }
}

// The measured blocked configurations of the device's tier, each with the best unit rate its entries that
// kept half the units busy calibrate (wave_model.hpp), in the table's order.
std::vector<Candidate> measured_candidates(const DeviceInfo& device, const tuning::Table& table, DataType type) {
  std::vector<Candidate> out;
  const tuning::Machine machine = tuning::machine_of(device);
  for_each_measured(device, table, type, [&](const tuning::Entry& e, tuning::TileModel model) {
    const tuning::Work at{e.m, e.n, e.k, 1};
    model.unit_gflops = tuning::calibrate_unit_gflops(machine, model, at, std::max(1u, e.config.split_k), e.gflops);
    const auto same = std::find_if(out.begin(), out.end(),
                                   [&](const Candidate& c) { return same_kernel_config(c.config, e.config); });
    if (same == out.end()) {
      out.push_back({e.config, model});
    } else {
      same->model.unit_gflops = std::max(same->model.unit_gflops, model.unit_gflops);
    }
    return true;
  });
  return out;
}

// The split count the model expects to finish first for this candidate, and its estimate.
std::pair<uint32_t, double> best_split(const tuning::Machine& machine, const Candidate& c, const tuning::Work& w,
                                       uint32_t element_size) {
  const auto seconds = [&](uint32_t s) {
    return tuning::main_seconds(machine, c.model, w, s) + tuning::reduce_seconds(machine, c.model, w, s, element_size);
  };
  const double unsplit = seconds(1);
  uint32_t best = 1;
  double best_seconds = unsplit;
  const uint32_t most = static_cast<uint32_t>(std::min<uint64_t>(kMaxBlockedSplits, w.k / kMinBlockedSliceK));
  for (uint32_t s = 2; s <= most; ++s) {
    const double t = seconds(s);
    if (t < unsplit * kSplitMargin && t < best_seconds) best = s, best_seconds = t;
  }
  return {best, best_seconds};
}

std::optional<tuning::Entry> exact_entry(const DeviceInfo& device, const tuning::Table& table, DataType type,
                                         const BlockedShape& s) {
  // Only the device's own measurements: a vendor-tier entry was the best on another GPU.
  if (table.find(device, type).second != tuning::Tier::device) return std::nullopt;
  const auto e = table.exact(device, type, Kernel::blocked, s.m, s.n, s.k, s.trans_a, s.trans_b, s.batch);
  if (!e || !fits(device, type, e->config)) return std::nullopt;
  return e;
}

}  // namespace

bool has_measured_blocked(const DeviceInfo& device, const tuning::Table& table, DataType type) {
  // The door asks this of every blocked call planned afresh: the first such entry answers, uncalibrated.
  bool any = false;
  for_each_measured(device, table, type, [&](const tuning::Entry&, const tuning::TileModel&) { return !(any = true); });
  return any;
}

BlockedChoice choose_blocked(const DeviceInfo& device, const tuning::Table& table, const GemmOptions& options,
                             DataType type, const BlockedShape& shape) {
  detail::count_check(detail::Checked::blocked_choice);
  const tuning::Machine machine = tuning::machine_of(device);
  const tuning::Work work{shape.m, shape.n, shape.k, shape.batch};
  const auto es = static_cast<uint32_t>(element_size(type));
  const uint32_t forced_split = options.blocked.split_k;
  if (options.blocked.chosen()) {
    BlockedChoice out{options.blocked, "caller", 0.0};
    if (forced_split == 0) out.config.split_k = best_split(machine, {options.blocked, tile_model(device, options.blocked)}, work, es).first;
    return out;
  }
  if (const auto e = exact_entry(device, table, type, shape); e && forced_split == 0) {
    BlockedChoice out{e->config, "tuned shape", 0.0};
    out.config.split_k = std::max(1u, out.config.split_k);
    return out;
  }
  std::vector<Candidate> candidates = measured_candidates(device, table, type);
  const std::string tier(tuning::to_string(table.find(device, type).second));
  std::string reason = fmt::format("wave model ({} table)", tier);
  if (candidates.empty()) {
    const BlockedConfig fallback = fallback_blocked_config(type);
    candidates.push_back({fallback, tile_model(device, fallback)});
    reason = "fallback, wave model";
  }
  BlockedChoice best{candidates.front().config, reason, 0.0};
  for (const Candidate& c : candidates) {
    auto [splits, seconds] = best_split(machine, c, work, es);
    if (forced_split != 0) {
      splits = forced_split;
      seconds = tuning::main_seconds(machine, c.model, work, splits) +
                tuning::reduce_seconds(machine, c.model, work, splits, es);
    }
    if (best.model_seconds == 0.0 || seconds < best.model_seconds) {
      best.config = c.config;
      best.config.split_k = splits;
      best.model_seconds = seconds;
      best.unit_gflops = c.model.unit_gflops;
    }
  }
  return best;
}

}  // namespace vkgemm::kernels
