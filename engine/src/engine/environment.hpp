// Every environment variable the library reads, read here and nowhere else (the list is in engine.hpp,
// under EngineOptions). The rest of the library takes what it needs as arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "device/device_choice.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/engine.hpp"

namespace vkgemm::detail {

// The tuning file an engine reads when EngineOptions::tuning_file is empty: $VKGEMM_TUNING_FILE, else
// $XDG_CONFIG_HOME/vkgemm/tuning.json, else ~/.config/vkgemm/tuning.json; empty when none is set.
std::string environment_tuning_file();

// What picks the device of an engine asked for `asked`: its device option, else VKGEMM_DEVICE, else the
// local-rank variables of kLocalRankVariables that are set (device_choice.hpp states the rule).
DeviceRequest environment_device_request(const EngineOptions& asked);

// VKGEMM_WAIT: the engine's default for GemmOptions::wait's automatic (auto, spin or sleep; unset: auto).
// Throws on another value.
WaitMode environment_wait_mode();

// Lowers `info`'s maxComputeWorkGroupCount and maxStorageBufferRange to VKGEMM_TEST_MAX_GROUP_COUNT and
// VKGEMM_TEST_MAX_STORAGE_RANGE where those are set, and turns push_descriptor off under
// VKGEMM_TEST_NO_PUSH_DESCRIPTOR=1 (testing knobs, engine.hpp); throws on a bad value.
void apply_test_limits(DeviceInfo& info);


}  // namespace vkgemm::detail
