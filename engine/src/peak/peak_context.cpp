#include "peak/peak_context.hpp"

#include "vk/commands.hpp"

namespace vkgemm::detail::peak {

vk::AllocatedBuffer PeakContext::create_buffer(uint64_t bytes, const char* name) const {
  return memory->create(bytes, vk::MemoryUse::storage, name);
}

void PeakContext::fill(const vk::AllocatedBuffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word) const {
  if (bytes == 0) return;
  const auto& t = device->table();
  submitter->run([&](VkCommandBuffer cmd) { vk::record_fill(t, cmd, buffer.buffer.get(), offset, bytes, word); });
}

}  // namespace vkgemm::detail::peak
