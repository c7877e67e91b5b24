#include "peak/peak_context.hpp"

namespace vkgemm::detail::peak {

vk::AllocatedBuffer PeakContext::create_buffer(uint64_t bytes, const char* name) const {
  return memory->create(bytes, vk::MemoryUse::storage, name);
}

void PeakContext::fill(const vk::AllocatedBuffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word) const {
  if (bytes == 0) return;
  const auto& t = device->table();
  const auto barrier = [&t](VkCommandBuffer cmd) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    t.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &b, 0,
                           nullptr, 0, nullptr);
  };
  submitter->run([&](VkCommandBuffer cmd) {
    barrier(cmd);
    t.vkCmdFillBuffer(cmd, buffer.buffer.get(), offset, bytes, word);
    barrier(cmd);
  });
}

}  // namespace vkgemm::detail::peak
