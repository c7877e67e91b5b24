#include "device/device_choice.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "vkgemm/error.hpp"

namespace vkgemm::detail {
namespace {

int rank_of(DeviceType t) {
  switch (t) {
    case DeviceType::discrete_gpu: return 0;
    case DeviceType::integrated_gpu: return 1;
    case DeviceType::virtual_gpu: return 2;
    case DeviceType::cpu: return 3;
    default: return 4;
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string list_names(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (const auto& d : devices) out += fmt::format("{}[{}] {}", out.empty() ? "" : ", ", d.index, d.name);
  return out;
}

// A value as a message quotes it: escaped, and cut at 64 characters (a variable can hold anything).
std::string quoted(std::string_view value) {
  constexpr size_t kShown = 64;
  const bool cut = value.size() > kShown;
  return fmt::format("{:?}{}", value.substr(0, kShown), cut ? fmt::format(" (cut; {} characters)", value.size()) : "");
}

DeviceChoice by_selector(const std::vector<DeviceInfo>& devices, const DeviceRequest& request) {
  const std::string& selector = request.selector;
  const std::string reason = request.selector_from.empty() ? fmt::format("asked for ({})", quoted(selector))
                                                           : fmt::format("{}={}", request.selector_from, selector);
  uint32_t index = 0;
  const auto [end, ec] = std::from_chars(selector.data(), selector.data() + selector.size(), index);
  const DeviceInfo* found = nullptr;
  if (ec == std::errc() && end == selector.data() + selector.size()) {
    if (index >= devices.size()) {
      throw Error(ErrorCode::device_not_found,
                  fmt::format("device index {} ({}) is out of range: there are {} devices ({})", index, reason,
                              devices.size(), list_names(devices)));
    }
    found = &devices[index];
  } else {
    const std::string needle = lower(selector);
    for (const auto& d : devices) {
      if (lower(d.name).find(needle) != std::string::npos) {
        found = &d;
        break;
      }
    }
    if (!found) {
      throw Error(ErrorCode::device_not_found, fmt::format("no device name contains {} ({}); the devices are: {}",
                                                           quoted(selector), reason, list_names(devices)));
    }
  }
  if (!found->has_compute_queue) {
    throw Error(ErrorCode::no_device, fmt::format("device {} ({}) has no compute queue", found->name, reason));
  }
  return {found->index, reason};
}

// A launcher's local rank as the request gives it.
struct LocalRank {
  const LocalRankVariables* variables = nullptr;
  uint32_t rank = 0;
  std::optional<uint32_t> size;
};

const std::string* find(const DeviceRequest& request, std::string_view name) {
  for (const auto& [n, v] : request.launcher) {
    if (n == name) return &v;
  }
  return nullptr;
}

// A whole number from `least` to 2^31 - 1 (MPI's ranks are C ints): digits only, no sign, no spaces.
uint32_t whole_number(const char* name, const std::string& value, uint32_t least, std::string_view what) {
  constexpr uint32_t kMost = std::numeric_limits<int32_t>::max();
  uint32_t v = 0;
  const char* first = value.data();
  const char* last = first + value.size();
  const auto [end, ec] = std::from_chars(first, last, v);
  const bool digits = !value.empty() && std::all_of(first, last, [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || ec != std::errc() || end != last || v < least || v > kMost) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}={} is not {} (a whole number from {} to {}), so the device cannot be chosen by "
                            "local rank; set VKGEMM_DEVICE to the device this process should take (vkgemm devices "
                            "lists them)",
                            name, quoted(value), what, least, kMost));
  }
  return v;
}

std::optional<LocalRank> local_rank(const DeviceRequest& request) {
  for (const LocalRankVariables& vars : kLocalRankVariables) {
    const std::string* rank = find(request, vars.rank);
    if (!rank) continue;
    LocalRank out;
    out.variables = &vars;
    out.rank = whole_number(vars.rank, *rank, 0, "a local rank");
    if (const std::string* size = find(request, vars.size)) {
      out.size = whole_number(vars.size, *size, 1, "a count of local ranks");
      if (out.rank >= *out.size) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("{}={} is not below {}={}: not a rank among that many, so the device cannot be "
                                "chosen by local rank; set VKGEMM_DEVICE to the device this process should take "
                                "(vkgemm devices lists them)",
                                vars.rank, out.rank, vars.size, *out.size));
      }
    }
    return out;
  }
  return std::nullopt;
}

std::string indices(const std::vector<const DeviceInfo*>& devices) {
  std::string out;
  for (const DeviceInfo* d : devices) out += fmt::format("{}[{}]", out.empty() ? "" : " ", d->index);
  return out;
}

DeviceChoice by_rank(const std::vector<const DeviceInfo*>& best, const LocalRank& local) {
  const auto count = static_cast<uint32_t>(best.size());
  const DeviceInfo& d = *best[local.rank % count];
  const LocalRankVariables& vars = *local.variables;
  std::string reason = fmt::format("local rank {}", local.rank);
  if (local.size) reason += fmt::format(" of {}", *local.size);
  reason += fmt::format(" ({}: {}", vars.launcher, vars.rank);
  if (local.size) reason += fmt::format(", {}", vars.size);
  reason += fmt::format(") mod the {} {} device{} {}", count, to_string(d.type), count == 1 ? "" : "s", indices(best));
  if (local.size && *local.size > count) {
    reason += fmt::format("; {} local ranks share {} device{}", *local.size, count, count == 1 ? "" : "s");
  }
  return {d.index, reason};
}

}  // namespace

DeviceChoice choose_device(const std::vector<DeviceInfo>& devices, const DeviceRequest& request) {
  if (devices.empty()) {
    throw Error(ErrorCode::no_device,
                "no Vulkan device found. Install a driver: apt-get install mesa-vulkan-drivers "
                "(lavapipe runs Vulkan on the CPU)");
  }
  if (!request.selector.empty()) return by_selector(devices, request);
  int best_rank = std::numeric_limits<int>::max();
  for (const auto& d : devices) {
    if (d.has_compute_queue) best_rank = std::min(best_rank, rank_of(d.type));
  }
  std::vector<const DeviceInfo*> best;
  for (const auto& d : devices) {
    if (d.has_compute_queue && rank_of(d.type) == best_rank) best.push_back(&d);
  }
  if (best.empty()) throw Error(ErrorCode::no_device, "no Vulkan device has a compute queue: " + list_names(devices));
  if (const auto local = local_rank(request)) return by_rank(best, *local);
  return {best.front()->index,
          fmt::format("the best device: the first {} of {} ({}), no VKGEMM_DEVICE, no launcher's local rank",
                      to_string(best.front()->type), best.size(), indices(best))};
}

}  // namespace vkgemm::detail
