// Every environment variable the library reads, read here and nowhere else (the list is in engine.hpp,
// under EngineOptions). The rest of the library takes what it needs as arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vkgemm/device_info.hpp"
#include "vkgemm/engine.hpp"

namespace vkgemm::detail {

// The tuning file an engine reads when EngineOptions::tuning_file is empty: $VKGEMM_TUNING_FILE, else
// $XDG_CONFIG_HOME/vkgemm/tuning.json, else ~/.config/vkgemm/tuning.json; empty when none is set.
std::string environment_tuning_file();

// Lowers `info`'s maxComputeWorkGroupCount and maxStorageBufferRange to VKGEMM_TEST_MAX_GROUP_COUNT and
// VKGEMM_TEST_MAX_STORAGE_RANGE where those are set, and turns push_descriptor off under
// VKGEMM_TEST_NO_PUSH_DESCRIPTOR=1 (testing knobs, engine.hpp); throws on a bad value.
void apply_test_limits(DeviceInfo& info);

#ifdef VKGEMM_EXPERIMENTS
// Experiment knobs for the performance work (docs/gpu.md), in developer builds only (the CMake option
// VKGEMM_EXPERIMENTS): the text of VKGEMM_EXPERIMENT_COOPMAT, VKGEMM_EXPERIMENT_COOPMAT2 and
// VKGEMM_EXPERIMENT_SPIRV, or nullptr.
const char* experiment_coopmat();
const char* experiment_coopmat2();
const char* experiment_spirv();
#endif

}  // namespace vkgemm::detail
