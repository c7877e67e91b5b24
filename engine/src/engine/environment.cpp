#include "engine/environment.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "vkgemm/error.hpp"

namespace vkgemm {
namespace {

// A variable's text; nullptr when unset or empty.
const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

}  // namespace

EngineOptions with_environment(EngineOptions options) {
  if (options.device.empty()) {
    if (const char* device = variable("VKGEMM_DEVICE")) options.device = device;
  }
  if (options.tuning_file.empty()) options.tuning_file = detail::environment_tuning_file();
  return options;
}

namespace detail {

std::string environment_tuning_file() {
  if (const char* f = variable("VKGEMM_TUNING_FILE")) return f;
  if (const char* xdg = variable("XDG_CONFIG_HOME")) return std::string(xdg) + "/vkgemm/tuning.json";
  if (const char* home = variable("HOME")) return std::string(home) + "/.config/vkgemm/tuning.json";
  return {};
}

DeviceRequest environment_device_request(const EngineOptions& asked) {
  DeviceRequest request;
  if (!asked.device.empty()) {
    request.selector = asked.device;
  } else if (const char* device = variable("VKGEMM_DEVICE")) {
    request.selector = device;
    request.selector_from = "VKGEMM_DEVICE";
  } else {
    for (const LocalRankVariables& vars : kLocalRankVariables) {
      for (const char* name : {vars.rank, vars.size}) {
        if (const char* value = variable(name)) request.launcher.emplace_back(name, value);
      }
    }
  }
  return request;
}

WaitMode environment_wait_mode() {
  const char* env = variable("VKGEMM_WAIT");
  if (!env) return WaitMode::automatic;
  for (const WaitMode mode : {WaitMode::automatic, WaitMode::spin, WaitMode::sleep}) {
    if (to_string(mode) == env) return mode;
  }
  throw Error(ErrorCode::invalid_argument, fmt::format("VKGEMM_WAIT={} is not auto, spin or sleep", env));
}

void apply_test_limits(DeviceInfo& info) {
  // Only lowers: a knob for exercising the partition (partition.hpp), never a way past the device.
  const auto read = [](const char* name, uint64_t max) -> std::optional<uint64_t> {
    const char* env = variable(name);
    if (!env) return std::nullopt;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (*end || v == 0 || v > max || env[0] == '-') {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}={} is not a whole number from 1 to {}", name, env, max));
    }
    return v;
  };
  if (const auto v = read("VKGEMM_TEST_MAX_GROUP_COUNT", 0xffffffffull)) {
    for (auto& count : info.max_workgroup_count) count = std::min<uint32_t>(count, static_cast<uint32_t>(*v));
  }
  if (const auto v = read("VKGEMM_TEST_MAX_STORAGE_RANGE", ~0ull)) {
    info.max_storage_buffer_range = std::min(info.max_storage_buffer_range, *v);
  }
  if (const auto v = read("VKGEMM_TEST_MAX_ALLOCATION", ~0ull)) {
    info.max_allocation_size = std::min(info.max_allocation_size, *v);
  }
  if (const auto v = read("VKGEMM_TEST_MAX_SHARED_MEMORY", 0xffffffffull)) {
    info.max_shared_memory = std::min<uint32_t>(info.max_shared_memory, static_cast<uint32_t>(*v));
  }
  // The descriptor-set ring on a device with push descriptors, so that one machine tests both ways of
  // recording a plan.
  if (const char* env = variable("VKGEMM_TEST_NO_PUSH_DESCRIPTOR")) {
    if (std::string_view(env) != "0" && std::string_view(env) != "1") {
      throw Error(ErrorCode::invalid_argument, fmt::format("VKGEMM_TEST_NO_PUSH_DESCRIPTOR={} is not 0 or 1", env));
    }
    if (env[0] == '1') info.push_descriptor = false;
  }
  // The copies beside the products on the compute queue, where the device has copy queues: the A/B of what
  // those queues bring, and a way around them.
  if (const char* env = variable("VKGEMM_TEST_NO_COPY_QUEUES")) {
    if (std::string_view(env) != "0" && std::string_view(env) != "1") {
      throw Error(ErrorCode::invalid_argument, fmt::format("VKGEMM_TEST_NO_COPY_QUEUES={} is not 0 or 1", env));
    }
    if (env[0] == '1') info.copy_queues = 0;
  }
}

HostCopyKnobs environment_host_copies() {
  HostCopyKnobs knobs;
  if (const char* env = variable("VKGEMM_TEST_HOST_COPIES")) {
    const std::string_view path(env);
    if (path != "import" && path != "staging") {
      throw Error(ErrorCode::invalid_argument, fmt::format("VKGEMM_TEST_HOST_COPIES={} is not import or staging", env));
    }
    knobs.path = path == "import" ? HostCopyPath::import : HostCopyPath::staging;
  }
  if (const char* env = variable("VKGEMM_TEST_STAGING_CHUNK")) {
    constexpr unsigned long long kMax = 1ull << 30;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (*end || v == 0 || v > kMax || env[0] == '-') {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("VKGEMM_TEST_STAGING_CHUNK={} is not a whole number of bytes from 1 to {}", env, kMax));
    }
    knobs.staging_chunk = v;
  }
  if (const char* env = variable("VKGEMM_TEST_HOST_PANELS"); env && std::string_view(env) == "none") {
    knobs.panel_lines = HostCopyKnobs::kNoPanels;
  } else if (env) {
    constexpr unsigned long long kMax = 1ull << 31;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (*end || v == 0 || v > kMax || env[0] == '-') {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("VKGEMM_TEST_HOST_PANELS={} is neither none nor a whole number of lines from 1 to {}",
                              env, kMax));
    }
    knobs.panel_lines = v;
  }
  if (const char* env = variable("VKGEMM_TEST_COPY_THREADS")) {
    constexpr unsigned long long kMax = 64;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (*end || v == 0 || v > kMax || env[0] == '-') {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("VKGEMM_TEST_COPY_THREADS={} is not a whole number of threads from 1 to {}", env, kMax));
    }
    knobs.copy_threads = static_cast<unsigned>(v);
  }
  return knobs;
}

}  // namespace detail
}  // namespace vkgemm
