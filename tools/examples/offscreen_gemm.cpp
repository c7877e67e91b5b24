// A graphics application that uses vkgemm inside its own Vulkan: it loads Vulkan with volk itself (global
// function pointers, as volk applications do), creates its own instance, device and a graphics+compute
// queue, and runs 100 frames: each clears an offscreen image in a render pass and, in the same command
// buffer, records one vkgemm plan (made once) on its own buffers. Each frame it reads back both and checks
// both: every pixel is the clear colour, C = alpha A^T B + beta C0 matches the CPU reference. With --validate (CTest passes it) it runs under
// VK_LAYER_KHRONOS_validation with synchronization validation, and any message fails it.
// Exit codes: 0 both right, 1 a wrong result, 2 an error, 3 validation messages.
#include <volk.h>  // before vkgemm/vulkan.hpp: volk wants VK_NO_PROTOTYPES, as any volk application

#include <algorithm>
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

// The application's instance, with validation and synchronization validation when asked.
struct Instance {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
};

Instance create_instance(bool validate) {
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
  Instance out;
  check(vkCreateInstance(&ici, nullptr, &out.instance), "vkCreateInstance");
  volkLoadInstance(out.instance);
  if (validate) check(vkCreateDebugUtilsMessengerEXT(out.instance, &messenger_info, nullptr, &out.messenger), "messenger");
  return out;
}

// The application's device: the first with a graphics+compute queue family, no optional feature enabled.
struct Device {
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkDevice dev = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkPhysicalDeviceFeatures enabled{};  // nothing optional: vkgemm must refuse f64 on this device
  std::vector<const char*> extensions;  // VK_KHR_push_descriptor where the device has it: plans push
};

bool has_device_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> all(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, all.data());
  return std::any_of(all.begin(), all.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

void pick_device(VkInstance instance, Device& d) {
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> pds(count);
  vkEnumeratePhysicalDevices(instance, &count, pds.data());
  for (VkPhysicalDevice candidate : pds) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(candidate, &n, nullptr);
    std::vector<VkQueueFamilyProperties> fams(n);
    vkGetPhysicalDeviceQueueFamilyProperties(candidate, &n, fams.data());
    for (uint32_t i = 0; i < n && !d.pd; ++i) {
      const VkQueueFlags want = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
      if ((fams[i].queueFlags & want) == want) d.pd = candidate, d.family = i;
    }
    if (d.pd) break;
  }
  if (!d.pd) throw std::runtime_error("no device with a graphics and compute queue");
}

void create_device(VkInstance instance, Device& d) {
  pick_device(instance, d);
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = d.family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.pEnabledFeatures = &d.enabled;
  if (has_device_extension(d.pd, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) {
    d.extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  }
  dci.enabledExtensionCount = static_cast<uint32_t>(d.extensions.size());
  dci.ppEnabledExtensionNames = d.extensions.data();
  check(vkCreateDevice(d.pd, &dci, nullptr, &d.dev), "vkCreateDevice");
  volkLoadDevice(d.dev);  // the application's global pointers; vkgemm keeps its own table
  vkGetDeviceQueue(d.dev, d.family, 0, &d.queue);
}

// The offscreen target: a 64x64 RGBA8 image cleared by a render pass, copied to a buffer.
constexpr uint32_t W = 64, H = 64;
constexpr VkFormat kFormat = VK_FORMAT_R8G8B8A8_UNORM;

struct Target {
  VkImage image = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkRenderPass pass = VK_NULL_HANDLE;
  VkFramebuffer framebuffer = VK_NULL_HANDLE;
  AppBuffer pixels;
};

void create_image(const Device& d, Target& t) {
  VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ii.imageType = VK_IMAGE_TYPE_2D;
  ii.format = kFormat;
  ii.extent = {W, H, 1};
  ii.mipLevels = ii.arrayLayers = 1;
  ii.samples = VK_SAMPLE_COUNT_1_BIT;
  ii.tiling = VK_IMAGE_TILING_OPTIMAL;
  ii.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  check(vkCreateImage(d.dev, &ii, nullptr, &t.image), "vkCreateImage");
  VkMemoryRequirements ireq;
  vkGetImageMemoryRequirements(d.dev, t.image, &ireq);
  VkMemoryAllocateInfo ialloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ialloc.allocationSize = ireq.size;
  ialloc.memoryTypeIndex = memory_type(d.pd, ireq.memoryTypeBits, 0);
  check(vkAllocateMemory(d.dev, &ialloc, nullptr, &t.memory), "vkAllocateMemory (image)");
  check(vkBindImageMemory(d.dev, t.image, t.memory, 0), "vkBindImageMemory");
  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = t.image;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = kFormat;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  check(vkCreateImageView(d.dev, &vi, nullptr, &t.view), "vkCreateImageView");
}

void create_render_pass(const Device& d, Target& t) {
  VkAttachmentDescription color{};
  color.format = kFormat;
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
  check(vkCreateRenderPass(d.dev, &rpi, nullptr, &t.pass), "vkCreateRenderPass");
  VkFramebufferCreateInfo fbi{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  fbi.renderPass = t.pass;
  fbi.attachmentCount = 1;
  fbi.pAttachments = &t.view;
  fbi.width = W, fbi.height = H, fbi.layers = 1;
  check(vkCreateFramebuffer(d.dev, &fbi, nullptr, &t.framebuffer), "vkCreateFramebuffer");
}

Target create_target(const Device& d) {
  Target t;
  create_image(d, t);
  create_render_pass(d, t);
  t.pixels = make_buffer(d.pd, d.dev, W * H * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  return t;
}

void destroy(VkDevice dev, Target& t) {
  destroy(dev, t.pixels);
  vkDestroyFramebuffer(dev, t.framebuffer, nullptr);
  vkDestroyRenderPass(dev, t.pass, nullptr);
  vkDestroyImageView(dev, t.view, nullptr);
  vkDestroyImage(dev, t.image, nullptr);
  vkFreeMemory(dev, t.memory, nullptr);
}

// The GEMM's operands in the application's buffers: C = 2 A^T B + 0.5 C0, column-major; the host's copies
// for the check.
constexpr uint64_t na = 45 * 37, nb = 45 * 29, nc = 37 * 29;
constexpr VkDeviceSize kCOffset = 256;  // C sits 256 bytes into its buffer: operands need not start at 0

struct Operands {
  vkgemm::GemmDesc desc{.layout = vkgemm::Layout::col_major, .op_a = vkgemm::Op::t, .m = 37, .n = 29, .k = 45,
                        .alpha = 2.0, .beta = 0.5};
  AppBuffer a, b, c;
  std::vector<float> ha, hb, hc0;
};

Operands make_operands(const Device& d) {
  Operands o;
  const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  o.a = make_buffer(d.pd, d.dev, na * 4, storage), o.b = make_buffer(d.pd, d.dev, nb * 4, storage);
  o.c = make_buffer(d.pd, d.dev, kCOffset + nc * 4, storage);
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  o.ha.resize(na), o.hb.resize(nb), o.hc0.resize(nc);
  for (auto& x : o.ha) x = dist(rng);
  for (auto& x : o.hb) x = dist(rng);
  for (auto& x : o.hc0) x = dist(rng);
  std::memcpy(o.a.mapped, o.ha.data(), na * 4);
  std::memcpy(o.b.mapped, o.hb.data(), nb * 4);
  std::memcpy(static_cast<char*>(o.c.mapped) + kCOffset, o.hc0.data(), nc * 4);
  return o;
}

void destroy(VkDevice dev, Operands& o) {
  destroy(dev, o.a);
  destroy(dev, o.b);
  destroy(dev, o.c);
}

// shaderFloat64 was not enabled: f64 must be refused, naming the feature. True when it was.
bool refuses_f64(const vkgemm::Engine& engine) {
  try {
    engine.check_supported(vkgemm::DataType::f64, {});
    std::printf("FAILED: f64 was accepted on a device created without shaderFloat64\n");
    return false;
  } catch (const vkgemm::Error& e) {
    std::printf("f64 refused as it should be: %s\n", e.what());
    return true;
  }
}

// The render pass's clear, then its copy to the pixel buffer.
void record_clear(VkCommandBuffer cmd, const Target& t) {
  VkClearValue clear{};
  clear.color = {{0.25f, 0.5f, 0.75f, 1.0f}};
  VkRenderPassBeginInfo rbi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  rbi.renderPass = t.pass;
  rbi.framebuffer = t.framebuffer;
  rbi.renderArea = {{0, 0}, {W, H}};
  rbi.clearValueCount = 1;
  rbi.pClearValues = &clear;
  vkCmdBeginRenderPass(cmd, &rbi, VK_SUBPASS_CONTENTS_INLINE);
  vkCmdEndRenderPass(cmd);
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {W, H, 1};
  vkCmdCopyImageToBuffer(cmd, t.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, t.pixels.buffer, 1, &region);
}

// One frame into `cmd`: the render pass, the copy and the planned GEMM, then what the host reads.
void record_frame(VkCommandBuffer cmd, const Target& t, const Operands& o, vkgemm::GemmPlan& plan) {
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  // The previous frame's GEMM and copy (its reads and writes of C, of the pixels, of the image) come first.
  VkMemoryBarrier previous{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  previous.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  previous.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                           VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                           VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                       0, 1, &previous, 0, nullptr, 0, nullptr);
  record_clear(cmd, t);
  // A, B and C were written by the host before the submission: the submission makes them visible, so the
  // plan needs no barrier before it here (see vulkan.hpp for what it expects). No allocation, no object.
  plan.record(cmd, {o.a.buffer, 0, o.a.size}, {o.b.buffer, 0, o.b.size}, {o.c.buffer, kCOffset, nc * 4});
  // What the record leaves to us: C and the pixels become visible to the host.
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
  check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
}

bool check_results(const Target& t, const Operands& o, bool quiet);

// kFrames frames, as a renderer runs them: one plan made once, recorded into the frame's command buffer
// (reset and reused) each frame, submitted, waited for, and the image and C checked. C is reset by the
// host before each frame (beta != 0: the GEMM updates it). True when every frame was right.
constexpr int kFrames = 100;
bool render_and_multiply(const Device& d, vkgemm::Engine& engine, const Target& t, const Operands& o) {
  vkgemm::GemmPlan plan = engine.plan(o.desc, {.c_offset = kCOffset, .timestamps = true});
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpi.queueFamilyIndex = d.family;
  VkCommandPool pool = VK_NULL_HANDLE;
  check(vkCreateCommandPool(d.dev, &cpi, nullptr, &pool), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  check(vkAllocateCommandBuffers(d.dev, &cai, &cmd), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  check(vkCreateFence(d.dev, &fci, nullptr, &fence), "vkCreateFence");
  int wrong_frames = 0;
  for (int frame = 0; frame < kFrames; ++frame) {
    std::memcpy(static_cast<char*>(o.c.mapped) + kCOffset, o.hc0.data(), nc * 4);
    std::memset(t.pixels.mapped, 0, W * H * 4);
    check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
    record_frame(cmd, t, o, plan);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(vkResetFences(d.dev, 1, &fence), "vkResetFences");
    check(vkQueueSubmit(d.queue, 1, &si, fence), "vkQueueSubmit");
    check(vkWaitForFences(d.dev, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    const bool quiet = frame > 0 && frame < kFrames - 1;  // the first and the last frame print their checks
    if (!check_results(t, o, quiet)) ++wrong_frames;
  }
  // The fence has signalled: the plan's last timestamps are there.
  const vkgemm::GemmTiming timing = plan.timing();
  if (timing.gpu_timestamps) std::printf("gemm gpu time (last frame): %.4f ms\n", timing.median_gpu_ms());
  std::printf("%d frames, one plan: %d wrong\n", kFrames, wrong_frames);
  vkDestroyFence(d.dev, fence, nullptr);
  vkDestroyCommandPool(d.dev, pool, nullptr);
  return wrong_frames == 0;
}

// Every pixel the clear colour, and C against the CPU reference. True when both are right.
bool check_results(const Target& t, const Operands& o, bool quiet) {
  const auto* px = static_cast<const uint8_t*>(t.pixels.mapped);
  const uint8_t want[4] = {64, 128, 191, 255};  // 0.25, 0.5, 0.75, 1.0 in UNORM8 (round to nearest)
  uint32_t wrong_pixels = 0;
  for (uint32_t i = 0; i < W * H; ++i)
    for (uint32_t ch = 0; ch < 4; ++ch)
      if (std::abs(int(px[i * 4 + ch]) - int(want[ch])) > 1) ++wrong_pixels;
  if (!quiet || wrong_pixels) {
    std::printf("image: %s (%u of %u channels wrong)\n", wrong_pixels ? "FAILED" : "cleared", wrong_pixels, W * H * 4);
  }
  std::vector<float> hc(nc);
  std::memcpy(hc.data(), static_cast<const char*>(o.c.mapped) + kCOffset, nc * 4);
  const vkgemm::Comparison cmp = vkgemm::compare_with_reference(o.desc, o.ha.data(), o.hb.data(), o.hc0.data(), hc.data());
  if (!quiet || !cmp.passed) std::printf("gemm: %s (%s)\n", cmp.passed ? "passed" : "FAILED", cmp.summary().c_str());
  return !wrong_pixels && cmp.passed;
}

int run(bool validate) {
  check(volkInitialize(), "volkInitialize (is libvulkan1 installed?)");
  const Instance instance = create_instance(validate);
  Device d;
  create_device(instance.instance, d);
  Target target = create_target(d);
  Operands operands = make_operands(d);
  int code = 0;
  {
    vkgemm::VulkanDevice adopted{instance.instance, d.pd, d.dev, d.queue, d.family, VK_API_VERSION_1_1,
                                 vkGetInstanceProcAddr, &d.enabled};
    adopted.enabled_extensions = d.extensions;
    vkgemm::Engine engine = vkgemm::adopt_device(adopted);
    std::printf("vkgemm adopted %s; plans record with %s\n", engine.device().name.c_str(),
                engine.device().push_descriptor ? "push descriptors" : "a ring of descriptor sets");
    if (!refuses_f64(engine)) code = 1;
    if (!render_and_multiply(d, engine, target, operands)) code = 1;
  }  // the engine goes before the device it borrowed
  destroy(d.dev, operands);
  destroy(d.dev, target);
  vkDestroyDevice(d.dev, nullptr);
  if (instance.messenger) vkDestroyDebugUtilsMessengerEXT(instance.instance, instance.messenger, nullptr);
  vkDestroyInstance(instance.instance, nullptr);
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
