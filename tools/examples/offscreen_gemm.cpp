// A graphics application that uses vkgemm inside its own Vulkan: it loads Vulkan with volk itself (global
// function pointers, as volk applications do), creates its own instance, device and a graphics+compute
// queue, clears an offscreen image in a render pass and, in the same command buffer, records a GEMM
// through vkgemm on its own buffers. It reads back both and checks both: every pixel is the clear colour,
// C = alpha A^T B + beta C0 matches the CPU reference. With --validate (CTest passes it) it runs under
// VK_LAYER_KHRONOS_validation with synchronization validation, and any message fails it.
// Exit codes: 0 both right, 1 a wrong result, 2 an error, 3 validation messages.
#include <volk.h>  // before vkgemm/vulkan.hpp: volk wants VK_NO_PROTOTYPES, as any volk application

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "vkgemm/vkgemm.hpp"
#include "vkgemm/vulkan.hpp"

namespace {

std::atomic<int> g_messages{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++g_messages;
  std::fprintf(stderr, "validation: %s\n", data->pMessage);
  return VK_FALSE;
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed with VkResult " + std::to_string(r));
}

uint32_t memory_type(VkPhysicalDevice pd, uint32_t allowed, VkMemoryPropertyFlags flags) {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(pd, &props);
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
    if ((allowed & (1u << i)) && (props.memoryTypes[i].propertyFlags & flags) == flags) return i;
  throw std::runtime_error("no host-visible coherent memory type");
}

// A host-visible buffer the application owns, mapped.
struct AppBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
};

AppBuffer make_buffer(VkPhysicalDevice pd, VkDevice dev, VkDeviceSize size, VkBufferUsageFlags usage) {
  AppBuffer b;
  b.size = size;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = usage;
  check(vkCreateBuffer(dev, &info, nullptr, &b.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, b.buffer, &req);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = memory_type(pd, req.memoryTypeBits,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  check(vkAllocateMemory(dev, &alloc, nullptr, &b.memory), "vkAllocateMemory");
  check(vkBindBufferMemory(dev, b.buffer, b.memory, 0), "vkBindBufferMemory");
  check(vkMapMemory(dev, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  return b;
}

void destroy(VkDevice dev, AppBuffer& b) {
  vkDestroyBuffer(dev, b.buffer, nullptr);
  vkFreeMemory(dev, b.memory, nullptr);
}

int run(bool validate) {
  check(volkInitialize(), "volkInitialize (is libvulkan1 installed?)");
  // ---- instance, with validation and synchronization validation when asked ----
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkgemm offscreen example";
  app.apiVersion = VK_API_VERSION_1_1;
  std::vector<const char*> layers, extensions;
  VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = on_message;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  if (validate) {
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    features.pNext = &messenger_info;
    ici.pNext = &features;
  }
  ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  VkInstance instance = VK_NULL_HANDLE;
  check(vkCreateInstance(&ici, nullptr, &instance), "vkCreateInstance");
  volkLoadInstance(instance);
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  if (validate) check(vkCreateDebugUtilsMessengerEXT(instance, &messenger_info, nullptr, &messenger), "messenger");

  // ---- the first device with a graphics+compute queue family ----
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> pds(count);
  vkEnumeratePhysicalDevices(instance, &count, pds.data());
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  uint32_t family = 0;
  for (VkPhysicalDevice candidate : pds) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(candidate, &n, nullptr);
    std::vector<VkQueueFamilyProperties> fams(n);
    vkGetPhysicalDeviceQueueFamilyProperties(candidate, &n, fams.data());
    for (uint32_t i = 0; i < n && !pd; ++i) {
      const VkQueueFlags want = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
      if ((fams[i].queueFlags & want) == want) pd = candidate, family = i;
    }
    if (pd) break;
  }
  if (!pd) throw std::runtime_error("no device with a graphics and compute queue");
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkPhysicalDeviceFeatures enabled{};  // nothing optional: vkgemm must refuse f64 on this device
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.pEnabledFeatures = &enabled;
  VkDevice dev = VK_NULL_HANDLE;
  check(vkCreateDevice(pd, &dci, nullptr, &dev), "vkCreateDevice");
  volkLoadDevice(dev);  // the application's global pointers; vkgemm keeps its own table
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(dev, family, 0, &queue);

  // ---- the offscreen target: a 64x64 RGBA8 image cleared by a render pass, copied to a buffer ----
  constexpr uint32_t W = 64, H = 64;
  VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ii.imageType = VK_IMAGE_TYPE_2D;
  ii.format = VK_FORMAT_R8G8B8A8_UNORM;
  ii.extent = {W, H, 1};
  ii.mipLevels = ii.arrayLayers = 1;
  ii.samples = VK_SAMPLE_COUNT_1_BIT;
  ii.tiling = VK_IMAGE_TILING_OPTIMAL;
  ii.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  VkImage image = VK_NULL_HANDLE;
  check(vkCreateImage(dev, &ii, nullptr, &image), "vkCreateImage");
  VkMemoryRequirements ireq;
  vkGetImageMemoryRequirements(dev, image, &ireq);
  VkMemoryAllocateInfo ialloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ialloc.allocationSize = ireq.size;
  ialloc.memoryTypeIndex = memory_type(pd, ireq.memoryTypeBits, 0);
  VkDeviceMemory image_memory = VK_NULL_HANDLE;
  check(vkAllocateMemory(dev, &ialloc, nullptr, &image_memory), "vkAllocateMemory (image)");
  check(vkBindImageMemory(dev, image, image_memory, 0), "vkBindImageMemory");
  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = image;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = ii.format;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkImageView view = VK_NULL_HANDLE;
  check(vkCreateImageView(dev, &vi, nullptr, &view), "vkCreateImageView");

  VkAttachmentDescription color{};
  color.format = ii.format;
  color.samples = VK_SAMPLE_COUNT_1_BIT;
  color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  color.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  color.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  color.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  color.finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription subpass{};
  subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  subpass.colorAttachmentCount = 1;
  subpass.pColorAttachments = &ref;
  // The clear's writes (and the final layout transition) happen before the copy reads the image.
  VkSubpassDependency to_copy{0, VK_SUBPASS_EXTERNAL, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                              VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                              VK_ACCESS_TRANSFER_READ_BIT, 0};
  VkRenderPassCreateInfo rpi{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  rpi.attachmentCount = 1;
  rpi.pAttachments = &color;
  rpi.subpassCount = 1;
  rpi.pSubpasses = &subpass;
  rpi.dependencyCount = 1;
  rpi.pDependencies = &to_copy;
  VkRenderPass pass = VK_NULL_HANDLE;
  check(vkCreateRenderPass(dev, &rpi, nullptr, &pass), "vkCreateRenderPass");
  VkFramebufferCreateInfo fbi{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  fbi.renderPass = pass;
  fbi.attachmentCount = 1;
  fbi.pAttachments = &view;
  fbi.width = W, fbi.height = H, fbi.layers = 1;
  VkFramebuffer framebuffer = VK_NULL_HANDLE;
  check(vkCreateFramebuffer(dev, &fbi, nullptr, &framebuffer), "vkCreateFramebuffer");
  AppBuffer pixels = make_buffer(pd, dev, W * H * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT);

  // ---- the GEMM's operands in the application's buffers: C = 2 A^T B + 0.5 C0, column-major ----
  vkgemm::GemmDesc desc{.layout = vkgemm::Layout::col_major, .op_a = vkgemm::Op::t, .m = 37, .n = 29, .k = 45,
                        .alpha = 2.0, .beta = 0.5};
  const uint64_t na = 45 * 37, nb = 45 * 29, nc = 37 * 29;
  const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  AppBuffer a = make_buffer(pd, dev, na * 4, storage), b = make_buffer(pd, dev, nb * 4, storage);
  // C sits 256 bytes into its buffer: operands need not start at 0.
  AppBuffer c = make_buffer(pd, dev, 256 + nc * 4, storage);
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> ha(na), hb(nb), hc0(nc);
  for (auto& x : ha) x = dist(rng);
  for (auto& x : hb) x = dist(rng);
  for (auto& x : hc0) x = dist(rng);
  std::memcpy(a.mapped, ha.data(), na * 4);
  std::memcpy(b.mapped, hb.data(), nb * 4);
  std::memcpy(static_cast<char*>(c.mapped) + 256, hc0.data(), nc * 4);

  int code = 0;
  {
    vkgemm::VulkanDevice adopted{instance, pd, dev, queue, family, VK_API_VERSION_1_1, vkGetInstanceProcAddr, &enabled};
    vkgemm::Engine engine = vkgemm::adopt_device(adopted);
    std::printf("vkgemm adopted %s\n", engine.device().name.c_str());
    try {  // shaderFloat64 was not enabled: f64 must be refused, naming the feature
      engine.check_supported(vkgemm::DataType::f64, {});
      std::printf("FAILED: f64 was accepted on a device created without shaderFloat64\n");
      code = 1;
    } catch (const vkgemm::Error& e) {
      std::printf("f64 refused as it should be: %s\n", e.what());
    }

    // ---- one command buffer: the render pass, the copy, the GEMM ----
    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.queueFamilyIndex = family;
    VkCommandPool pool = VK_NULL_HANDLE;
    check(vkCreateCommandPool(dev, &cpi, nullptr, &pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    check(vkAllocateCommandBuffers(dev, &cai, &cmd), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    VkClearValue clear{};
    clear.color = {{0.25f, 0.5f, 0.75f, 1.0f}};
    VkRenderPassBeginInfo rbi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    rbi.renderPass = pass;
    rbi.framebuffer = framebuffer;
    rbi.renderArea = {{0, 0}, {W, H}};
    rbi.clearValueCount = 1;
    rbi.pClearValues = &clear;
    vkCmdBeginRenderPass(cmd, &rbi, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdEndRenderPass(cmd);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {W, H, 1};
    vkCmdCopyImageToBuffer(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, pixels.buffer, 1, &region);
    // A, B and C were written by the host before the submission: the submission makes them visible, so
    // record_gemm() needs no barrier before it here (see vulkan.hpp for what it expects).
    vkgemm::GemmRecording recording =
        vkgemm::record_gemm(engine, cmd, desc, {a.buffer, 0, a.size}, {b.buffer, 0, b.size}, {c.buffer, 256, nc * 4});
    // What record_gemm() leaves to us: C and the pixels become visible to the host.
    VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    check(vkCreateFence(dev, &fci, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
    check(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    // The fence has signalled: the recording (descriptor set, queries) may go now, after its times.
    const vkgemm::GemmTiming timing = recording.timing();
    if (timing.gpu_timestamps) std::printf("gemm gpu time: %.4f ms\n", timing.median_gpu_ms());
    recording = {};

    // ---- check both ----
    const auto* px = static_cast<const uint8_t*>(pixels.mapped);
    const uint8_t want[4] = {64, 128, 191, 255};  // 0.25, 0.5, 0.75, 1.0 in UNORM8 (round to nearest)
    uint32_t wrong_pixels = 0;
    for (uint32_t i = 0; i < W * H; ++i)
      for (uint32_t ch = 0; ch < 4; ++ch)
        if (std::abs(int(px[i * 4 + ch]) - int(want[ch])) > 1) ++wrong_pixels;
    std::printf("image: %s (%u of %u channels wrong)\n", wrong_pixels ? "FAILED" : "cleared", wrong_pixels, W * H * 4);
    std::vector<float> hc(nc);
    std::memcpy(hc.data(), static_cast<const char*>(c.mapped) + 256, nc * 4);
    const vkgemm::Comparison cmp = vkgemm::compare_with_reference(desc, ha.data(), hb.data(), hc0.data(), hc.data());
    std::printf("gemm: %s (%s)\n", cmp.passed ? "passed" : "FAILED", cmp.summary().c_str());
    if (wrong_pixels || !cmp.passed) code = 1;
    vkDestroyFence(dev, fence, nullptr);
    vkDestroyCommandPool(dev, pool, nullptr);
  }  // the engine goes before the device it borrowed

  destroy(dev, a);
  destroy(dev, b);
  destroy(dev, c);
  destroy(dev, pixels);
  vkDestroyFramebuffer(dev, framebuffer, nullptr);
  vkDestroyRenderPass(dev, pass, nullptr);
  vkDestroyImageView(dev, view, nullptr);
  vkDestroyImage(dev, image, nullptr);
  vkFreeMemory(dev, image_memory, nullptr);
  vkDestroyDevice(dev, nullptr);
  if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  vkDestroyInstance(instance, nullptr);
  if (g_messages) {
    std::printf("FAILED: %d validation messages\n", g_messages.load());
    return 3;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  const bool validate = argc > 1 && std::strcmp(argv[1], "--validate") == 0;
  try {
    return run(validate);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
