// What vkgemm peak measures with: an engine's device, memory, pipelines and submitter, lent for one
// measure_peaks call (engine/peak_entry.cpp builds it under the engine's lock). peak/ sits below the engine
// (docs/architecture.md, "The floors") and knows nothing of it but these.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/pipelines.hpp"
#include "vk/device.hpp"
#include "vk/memory.hpp"
#include "vk/physical_device.hpp"
#include "vk/submitter.hpp"
#include "vkgemm/peak.hpp"

namespace vkgemm::detail::peak {

struct PeakContext {
  const PhysicalDevice& physical;
  vk::Device* device;
  const vk::MemoryAllocator* memory;
  vk::Submitter* submitter;
  kernels::Pipelines* pipelines;

  // A device-local storage buffer of `bytes`, labelled `name` for the validation layer and debuggers.
  vk::AllocatedBuffer create_buffer(uint64_t bytes, const char* name) const;
  // Every 4 bytes of buffer[offset, offset + bytes) set to `word` (both multiples of 4), finished before it
  // returns (vk::record_fill, as Engine::fill).
  void fill(const vk::AllocatedBuffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word) const;
};

// The measurements of vkgemm/peak.hpp on the lent device (options checked by the caller).
std::vector<PeakMeasurement> measure(const PeakContext& context, const PeakOptions& options);

}  // namespace vkgemm::detail::peak
