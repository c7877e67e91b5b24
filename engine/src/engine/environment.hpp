// Every environment variable the library reads, read here and nowhere else (the list is in engine.hpp,
// under EngineOptions). The rest of the library takes what it needs as arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "device/device_choice.hpp"
#include "vk/host_copies.hpp"
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
// VKGEMM_TEST_MAX_STORAGE_RANGE where those are set, turns push_descriptor off under
// VKGEMM_TEST_NO_PUSH_DESCRIPTOR=1 and the copy queues under VKGEMM_TEST_NO_COPY_QUEUES=1 (testing knobs,
// engine.hpp); throws on a bad value.
void apply_test_limits(DeviceInfo& info);

// VKGEMM_TEST_HOST_COPIES (import or staging: every copy between host memory and a storage buffer goes that
// way, whatever its size and whether the storage is mapped; import still falls back to staging where the
// device refuses) and VKGEMM_TEST_STAGING_CHUNK (bytes, a staging chunk's size, so that small copies cross
// chunk boundaries) and VKGEMM_TEST_HOST_PANELS (lines a panel: every product that may be cut is, whatever
// its size and device; none: no product is) and VKGEMM_TEST_COPY_THREADS (the host threads a staged copy's
// memcpy is spread over): testing knobs (engine.hpp). Throws on a bad value.
HostCopyKnobs environment_host_copies();


}  // namespace vkgemm::detail
