// A small neural network evaluated over every pixel inside an application's frame: 64 features per pixel
// (f16, as a G-buffer pass would write them) through three layers, 64 -> 64 (ReLU) -> 64 (ReLU) -> 4
// (sigmoid), with fp32 sums and each layer's bias and activation fused into its product (GemmDesc::epilogue),
// chained in one vkgemm::GemmChain; the last layer's rows x 4 f16 output is the RGBA16F storage image's
// texels, copied into it. The application owns everything else: its Vulkan (volk), its device (adopted),
// its command buffer, its image, its buffers. The first frame is checked against the CPU reference (each
// layer from the input the GPU gave it, on sampled rows); every frame prints its GPU time.
//
//   vkgemm_network_example [--size WxH] [--frames N] [--warmup-ms MS] [--compare] [--validate]
// Before its timed frames each run renders untimed frames for --warmup-ms of wall time (default 500): a GPU
// that idled clocks down (an H100 to a fifth of its speed) and needs that long under load to clock up, as it
// would be in a running application. --compare also runs the same layers as plain products, each followed
// by a separate elementwise pass (bias and activation: a vkgemm call with k = 0 that reads and writes C in
// place, as an application's own elementwise shader would), and prints both per-frame times. --validate:
// under VK_LAYER_KHRONOS_validation, any message fails. Exit codes: 0 right, 1 a wrong result, 2 an error,
// 3 validation messages.
#include <volk.h>  // before vkgemm/vulkan.hpp: volk wants VK_NO_PROTOTYPES, as any volk application

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

// ---- the application's Vulkan: instance, device, memory ----

struct App {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  uint32_t api = VK_API_VERSION_1_2;  // the instance's: the loader's, at most 1.3
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  uint32_t device_api = 0;            // the device's
  uint32_t family = 0;
  VkDevice dev = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkPhysicalDeviceFeatures enabled{};
  // What vkgemm's kernels use, turned on where the device has it (DeviceFeatures below): the f16 kernels
  // need fp16 arithmetic and 16-bit storage, the i8 ones 8-bit storage, the cooperative-matrix kernels (the
  // fast ones on NVIDIA, AMD and Intel) their extension, the memory model, maintenance4 and subgroup size
  // control. vkgemm uses only what the device was created with (docs/library.md, "Adopting").
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  // The cooperative-matrix structs where the Vulkan headers have them (KHR from 1.3.255, NV2 from 1.3.300).
#if defined(VK_KHR_cooperative_matrix)
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
#endif
#if defined(VK_NV_cooperative_matrix2)
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV coop2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
#endif
  void* chain = nullptr;  // the enabled structs above, linked: VkDeviceCreateInfo::pNext
  std::vector<const char*> extensions;
};

void create_instance(App& app, bool validate) {
  VkApplicationInfo info{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  info.pApplicationName = "vkgemm network example";
  uint32_t loader = VK_API_VERSION_1_0;
  check(vkEnumerateInstanceVersion(&loader), "vkEnumerateInstanceVersion");
  if (loader < VK_API_VERSION_1_2) throw std::runtime_error("the Vulkan loader speaks 1.1 or older; this example needs 1.2");
  app.api = std::min(loader, VK_API_VERSION_1_3);
  info.apiVersion = app.api;
  VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  mi.pfnUserCallback = on_message;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &info;
  if (validate) {
    ici.pNext = &mi;
    ici.enabledLayerCount = 1, ici.ppEnabledLayerNames = &layer;
    ici.enabledExtensionCount = 1, ici.ppEnabledExtensionNames = &ext;
  }
  check(vkCreateInstance(&ici, nullptr, &app.instance), "vkCreateInstance");
  volkLoadInstance(app.instance);
  if (validate) check(vkCreateDebugUtilsMessengerEXT(app.instance, &mi, nullptr, &app.messenger), "messenger");
}

// The first device with a compute queue that speaks Vulkan 1.2.
void pick_device(App& app) {
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(app.instance, &count, nullptr);
  std::vector<VkPhysicalDevice> pds(count);
  vkEnumeratePhysicalDevices(app.instance, &count, pds.data());
  for (VkPhysicalDevice pd : pds) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    if (props.apiVersion < VK_API_VERSION_1_2) continue;
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
    std::vector<VkQueueFamilyProperties> fams(n);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
    for (uint32_t i = 0; i < n && !app.pd; ++i)
      if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) app.pd = pd, app.family = i, app.device_api = props.apiVersion;
    if (app.pd) break;
  }
  if (!app.pd) throw std::runtime_error("no Vulkan 1.2 device with a compute queue");
}

// The extensions vkgemm uses that the device lists: push descriptors, and the cooperative matrices.
void pick_extensions(App& app) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(app.pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> all(n);
  vkEnumerateDeviceExtensionProperties(app.pd, nullptr, &n, all.data());
  for (const char* want : {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME,
#if defined(VK_KHR_cooperative_matrix)
                           VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME,
#endif
#if defined(VK_NV_cooperative_matrix2)
                           VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME,
#endif
                           "none"}) {
    for (const auto& e : all)
      if (std::strcmp(e.extensionName, want) == 0) app.extensions.push_back(want);
  }
}

// Unused where the Vulkan headers predate both cooperative-matrix extensions.
[[maybe_unused]] bool listed(const App& app, const char* extension) {
  return std::any_of(app.extensions.begin(), app.extensions.end(),
                     [&](const char* e) { return std::strcmp(e, extension) == 0; });
}

// What the device has of the features vkgemm uses, read into app's structs (vkGetPhysicalDeviceFeatures2),
// then every other feature turned off: the chain enables exactly these, where the device has them.
void pick_features(App& app) {
  const bool v13 = app.api >= VK_API_VERSION_1_3 && app.device_api >= VK_API_VERSION_1_3;
  app.f11.pNext = &app.f12;
  void** tail = &app.f12.pNext;
  const auto append = [&](auto& s) { *tail = &s, tail = &s.pNext; };
  if (v13) append(app.f13);
#if defined(VK_KHR_cooperative_matrix)
  if (listed(app, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME)) append(app.coop);
#endif
#if defined(VK_NV_cooperative_matrix2)
  if (listed(app, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME)) append(app.coop2);
#endif
  VkPhysicalDeviceFeatures2 has{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  has.pNext = &app.f11;
  vkGetPhysicalDeviceFeatures2(app.pd, &has);
  const VkPhysicalDeviceVulkan11Features f11 = app.f11;
  const VkPhysicalDeviceVulkan12Features f12 = app.f12;
  const VkPhysicalDeviceVulkan13Features f13 = app.f13;
  app.f11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, f11.pNext};
  app.f11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
  app.f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, f12.pNext};
  app.f12.shaderFloat16 = f12.shaderFloat16;
  app.f12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
  app.f12.shaderInt8 = f12.shaderInt8;
  app.f12.vulkanMemoryModel = f12.vulkanMemoryModel;
  app.f12.timelineSemaphore = f12.timelineSemaphore;
  app.f12.hostQueryReset = f12.hostQueryReset;
  app.f13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, f13.pNext};
  app.f13.subgroupSizeControl = f13.subgroupSizeControl;
  app.f13.computeFullSubgroups = f13.computeFullSubgroups;
  app.f13.maintenance4 = f13.maintenance4;
  app.f13.shaderIntegerDotProduct = f13.shaderIntegerDotProduct;
  // The extensions' structs keep what the device has: every member of theirs is one vkgemm uses
  // (cooperativeMatrixRobustBufferAccess and the NV block loads and reductions off).
#if defined(VK_KHR_cooperative_matrix)
  app.coop.cooperativeMatrixRobustBufferAccess = VK_FALSE;
#endif
#if defined(VK_NV_cooperative_matrix2)
  app.coop2.cooperativeMatrixReductions = VK_FALSE;
  app.coop2.cooperativeMatrixBlockLoads = VK_FALSE;
#endif
  app.chain = &app.f11;
}

void create_device(App& app) {
  pick_device(app);
  pick_extensions(app);
  pick_features(app);
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = app.family, qci.queueCount = 1, qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = app.chain;
  dci.queueCreateInfoCount = 1, dci.pQueueCreateInfos = &qci;
  dci.pEnabledFeatures = &app.enabled;
  dci.enabledExtensionCount = static_cast<uint32_t>(app.extensions.size());
  dci.ppEnabledExtensionNames = app.extensions.data();
  check(vkCreateDevice(app.pd, &dci, nullptr, &app.dev), "vkCreateDevice");
  volkLoadDevice(app.dev);
  vkGetDeviceQueue(app.dev, app.family, 0, &app.queue);
}

uint32_t memory_type(const App& app, uint32_t allowed, VkMemoryPropertyFlags flags) {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(app.pd, &props);
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
    if ((allowed & (1u << i)) && (props.memoryTypes[i].propertyFlags & flags) == flags) return i;
  throw std::runtime_error("no memory type with the properties asked");
}

struct AppBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;  // host-visible ones
  vkgemm::VulkanBufferRange range() const { return {buffer, 0, size}; }
};

AppBuffer make_buffer(const App& app, VkDeviceSize size, VkBufferUsageFlags usage, bool host) {
  AppBuffer b;
  b.size = size;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size, info.usage = usage;
  check(vkCreateBuffer(app.dev, &info, nullptr, &b.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(app.dev, b.buffer, &req);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = memory_type(app, req.memoryTypeBits, host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                                          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                                                    : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  check(vkAllocateMemory(app.dev, &alloc, nullptr, &b.memory), "vkAllocateMemory");
  check(vkBindBufferMemory(app.dev, b.buffer, b.memory, 0), "vkBindBufferMemory");
  if (host) check(vkMapMemory(app.dev, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  return b;
}

void destroy(const App& app, AppBuffer& b) {
  vkDestroyBuffer(app.dev, b.buffer, nullptr);
  vkFreeMemory(app.dev, b.memory, nullptr);
}

// One command buffer, submitted and waited for: the set-up's uploads and every frame.
struct Frame {
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
};

Frame make_frame(const App& app) {
  Frame f;
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, cpi.queueFamilyIndex = app.family;
  check(vkCreateCommandPool(app.dev, &cpi, nullptr, &f.pool), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = f.pool, cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, cai.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(app.dev, &cai, &f.cmd), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(app.dev, &fci, nullptr, &f.fence), "vkCreateFence");
  return f;
}

template <typename Record>
void submit(const App& app, const Frame& f, Record&& record) {
  check(vkResetCommandBuffer(f.cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(f.cmd, &begin), "vkBeginCommandBuffer");
  record(f.cmd);
  check(vkEndCommandBuffer(f.cmd), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1, si.pCommandBuffers = &f.cmd;
  check(vkResetFences(app.dev, 1, &f.fence), "vkResetFences");
  check(vkQueueSubmit(app.queue, 1, &si, f.fence), "vkQueueSubmit");
  check(vkWaitForFences(app.dev, 1, &f.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
             VkAccessFlags dst_access) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = src_access, b.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &b, 0, nullptr, 0, nullptr);
}

// A device-local buffer holding `data`, uploaded through a staging buffer.
AppBuffer upload(const App& app, const Frame& f, const std::vector<uint16_t>& data, VkBufferUsageFlags usage) {
  const VkDeviceSize bytes = data.size() * 2;
  AppBuffer staging = make_buffer(app, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
  std::memcpy(staging.mapped, data.data(), bytes);
  AppBuffer out = make_buffer(app, bytes, usage | VK_BUFFER_USAGE_TRANSFER_DST_BIT, false);
  submit(app, f, [&](VkCommandBuffer cmd) {
    const VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(cmd, staging.buffer, out.buffer, 1, &region);
    barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT);
  });
  destroy(app, staging);
  return out;
}

// ---- the network ----

constexpr int64_t kWidth = 64, kOutputs = 4;  // 64 features in, two hidden layers of 64, RGBA out

struct Network {
  int64_t rows = 0;
  std::vector<std::vector<uint16_t>> weights, biases;  // f16 on the host, for the check
  std::vector<uint16_t> features;                      // rows x 64
  vkgemm::ChainDesc desc() const {
    const auto layer = [](int64_t width, vkgemm::Activation act) {
      return vkgemm::ChainLayer{width, {.bias = vkgemm::BiasAxis::per_column, .bias_type = vkgemm::DataType::f16,
                                        .activation = act}};
    };
    return {.type = vkgemm::DataType::f16, .rows = rows, .input_width = kWidth,
            .layers = {layer(kWidth, vkgemm::Activation::relu), layer(kWidth, vkgemm::Activation::relu),
                       layer(kOutputs, vkgemm::Activation::sigmoid)}};
  }
};

std::vector<uint16_t> random_f16(size_t n, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<uint16_t> out(n);
  for (auto& x : out) x = vkgemm::float_to_half(dist(rng));
  return out;
}

// The features: a positional encoding of each pixel, sin and cos of x and y at 16 frequencies.
Network make_network(uint32_t width, uint32_t height) {
  Network net;
  net.rows = int64_t(width) * height;
  net.features.resize(size_t(net.rows * kWidth));
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x)
      for (int f = 0; f < 16; ++f) {
        const float w = std::ldexp(3.14159265f, f / 2) / float(width), u = float(x) * w, v = float(y) * w;
        uint16_t* row = &net.features[(size_t(y) * width + x) * kWidth + size_t(f) * 4];
        row[0] = vkgemm::float_to_half(std::sin(u)), row[1] = vkgemm::float_to_half(std::cos(u));
        row[2] = vkgemm::float_to_half(std::sin(v)), row[3] = vkgemm::float_to_half(std::cos(v));
      }
  std::mt19937 rng(2024);
  for (const int64_t n : {kWidth, kWidth, kOutputs}) {
    net.weights.push_back(random_f16(size_t(kWidth * n), 0.25f, rng));  // ~ 2/sqrt(64): activations stay O(1)
    net.biases.push_back(random_f16(size_t(n), 0.5f, rng));
  }
  return net;
}

// ---- what the frame holds on the device ----

struct Scene {
  uint32_t width = 0, height = 0;
  AppBuffer features, output, readback;
  std::vector<AppBuffer> weights, biases;
  VkImage image = VK_NULL_HANDLE;  // RGBA16F storage image: the network's output, one texel per row
  VkDeviceMemory image_memory = VK_NULL_HANDLE;
};

void create_image(const App& app, Scene& s) {
  VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ii.imageType = VK_IMAGE_TYPE_2D, ii.format = VK_FORMAT_R16G16B16A16_SFLOAT, ii.extent = {s.width, s.height, 1};
  ii.mipLevels = ii.arrayLayers = 1, ii.samples = VK_SAMPLE_COUNT_1_BIT, ii.tiling = VK_IMAGE_TILING_OPTIMAL;
  ii.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  check(vkCreateImage(app.dev, &ii, nullptr, &s.image), "vkCreateImage");
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(app.dev, s.image, &req);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = memory_type(app, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  check(vkAllocateMemory(app.dev, &alloc, nullptr, &s.image_memory), "vkAllocateMemory (image)");
  check(vkBindImageMemory(app.dev, s.image, s.image_memory, 0), "vkBindImageMemory");
}

Scene make_scene(const App& app, const Frame& f, const Network& net, uint32_t width, uint32_t height) {
  Scene s;
  s.width = width, s.height = height;
  const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  s.features = upload(app, f, net.features, storage);
  for (size_t i = 0; i < net.weights.size(); ++i) {
    s.weights.push_back(upload(app, f, net.weights[i], storage));
    std::vector<uint16_t> bias = net.biases[i];
    bias.resize((bias.size() + 1) / 2 * 2);  // whole 32-bit words (library.md, Epilogues)
    s.biases.push_back(upload(app, f, bias, storage));
  }
  const VkDeviceSize out_bytes = VkDeviceSize(net.rows) * kOutputs * 2;
  s.output = make_buffer(app, out_bytes, storage | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, false);
  s.readback = make_buffer(app, out_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
  create_image(app, s);
  submit(app, f, [&](VkCommandBuffer cmd) {  // the image lives in GENERAL, as a storage image does
    VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    ib.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED, ib.newLayout = VK_IMAGE_LAYOUT_GENERAL;
    ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    ib.image = s.image, ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    ib.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
                         nullptr, 1, &ib);
  });
  return s;
}

void destroy(const App& app, Scene& s) {
  for (AppBuffer* b : {&s.features, &s.output, &s.readback}) destroy(app, *b);
  for (auto& b : s.weights) destroy(app, b);
  for (auto& b : s.biases) destroy(app, b);
  vkDestroyImage(app.dev, s.image, nullptr);
  vkFreeMemory(app.dev, s.image_memory, nullptr);
}

// The network's output into the image (rows x 4 f16 are RGBA16F texels in row order), and on the checked
// frame the image back to the host.
void record_to_image(VkCommandBuffer cmd, const Scene& s, bool read_back) {
  barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_TRANSFER_READ_BIT);
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {s.width, s.height, 1};
  vkCmdCopyBufferToImage(cmd, s.output.buffer, s.image, VK_IMAGE_LAYOUT_GENERAL, 1, &region);
  if (!read_back) return;
  barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_TRANSFER_READ_BIT);
  vkCmdCopyImageToBuffer(cmd, s.image, VK_IMAGE_LAYOUT_GENERAL, s.readback.buffer, 1, &region);
  barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_HOST_READ_BIT);
}

// The previous frame's copy out of the output buffer, and its GEMMs, before this frame writes them again.
void after_previous_frame(VkCommandBuffer cmd) {
  barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
          VK_ACCESS_TRANSFER_WRITE_BIT);
}

// ---- the check ----

// Layer `i` on `picked` rows of its input (the GPU's, f16), against vkgemm's CPU reference: each row of a
// layer is its own sample, so a subset of rows is a smaller product judged by the one-product bound.
bool check_layer(const Network& net, size_t i, const std::vector<uint16_t>& in, const std::vector<uint16_t>& out,
                 const std::vector<int64_t>& picked) {
  const vkgemm::ChainDesc chain = net.desc();
  const int64_t k = i == 0 ? kWidth : chain.layers[i - 1].width, n = chain.layers[i].width;
  std::vector<uint16_t> a, c;
  for (const int64_t r : picked) {
    a.insert(a.end(), in.begin() + r * k, in.begin() + (r + 1) * k);
    c.insert(c.end(), out.begin() + r * n, out.begin() + (r + 1) * n);
  }
  vkgemm::GemmDesc d{.type = vkgemm::DataType::f16, .c_type = vkgemm::DataType::f16,
                     .m = int64_t(picked.size()), .n = n, .k = k};
  d.epilogue = chain.layers[i].epilogue;
  const std::vector<uint16_t> c0(c.size());
  const vkgemm::Comparison cmp =
      vkgemm::compare_with_reference(d, a.data(), net.weights[i].data(), c0.data(), c.data(), {}, net.biases[i].data());
  std::printf("check: layer %zu on %zu rows: %s (%s)\n", i, picked.size(), cmp.passed ? "passed" : "FAILED",
              cmp.summary().c_str());
  return cmp.passed;
}

// The first frame: every layer from the GPU's own input, the last one's output read back from the image.
bool check_frame(vkgemm::Engine& engine, const vkgemm::GemmChain& chain, const Network& net, const Scene& s) {
  std::vector<int64_t> picked;
  for (int64_t r = 0; r < net.rows; r += std::max<int64_t>(1, net.rows / 4096)) picked.push_back(r);
  picked.push_back(net.rows - 1);
  std::vector<uint16_t> in = net.features;
  bool ok = true;
  for (size_t i = 0; i < chain.layers(); ++i) {
    std::vector<uint16_t> out(size_t(net.rows * net.desc().layers[i].width));
    if (i + 1 < chain.layers()) {
      engine.read(chain.intermediate(i), 0, out.data(), out.size() * 2);
    } else {
      std::memcpy(out.data(), s.readback.mapped, out.size() * 2);  // the image's texels
    }
    ok = check_layer(net, i, in, out, picked) && ok;
    in = std::move(out);
  }
  return ok;
}

// ---- the frames ----

struct Timing {
  std::vector<double> ms;  // per frame
  double median() const {
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    return s.empty() ? 0.0 : s[s.size() / 2];
  }
};

double sum_ms(const std::vector<vkgemm::GemmTiming>& layers) {
  double ms = 0.0;
  for (const auto& t : layers)
    for (double x : t.gpu_ms) ms += x;
  return ms;
}

// Untimed frames for `ms` of wall time: the GPU's clock up to speed before the timed frames.
template <class F>
void warm_up(double ms, const F& frame) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
  while (std::chrono::steady_clock::now() < until) frame();
}

// `frames` frames of the fused chain after warmup_ms of untimed ones; the first timed frame checked. Returns
// the per-frame GPU times of the chain.
Timing run_fused(const App& app, const Frame& f, vkgemm::Engine& engine, const Network& net, const Scene& s,
                 int frames, double warmup_ms, bool& ok) {
  vkgemm::GemmChain chain = engine.chain(net.desc(), {.timestamps = true});
  for (size_t i = 0; i < chain.layers(); ++i) {  // what auto chose for each layer on this device
    std::printf("layer %zu: %s %s\n", i, to_string(chain.layer(i).kernel()).data(), chain.layer(i).config().c_str());
  }
  std::vector<vkgemm::VulkanBufferRange> w, b;
  for (size_t i = 0; i < s.weights.size(); ++i) w.push_back(s.weights[i].range()), b.push_back(s.biases[i].range());
  const auto frame_once = [&](bool read_back) {
    submit(app, f, [&](VkCommandBuffer cmd) {
      after_previous_frame(cmd);
      chain.record(cmd, s.features.range(), w, b, s.output.range());  // no allocation, no Vulkan object
      record_to_image(cmd, s, read_back);
    });
  };
  warm_up(warmup_ms, [&] { frame_once(false); });
  Timing t;
  for (int frame = 0; frame < frames; ++frame) {
    frame_once(frame == 0);
    t.ms.push_back(sum_ms(chain.timing()));
    std::printf("frame %d: network %.4f ms on the GPU\n", frame, t.ms.back());
    if (frame == 0) ok = check_frame(engine, chain, net, s) && ok;
  }
  return t;
}

// The same layers unfused: each a plain product into the output (f16), then a separate elementwise pass
// (k = 0, beta 1: C = f(C + bias), read and written in place) with a barrier between.
Timing run_unfused(const App& app, const Frame& f, vkgemm::Engine& engine, const Network& net, const Scene& s,
                   int frames, double warmup_ms) {
  const vkgemm::ChainDesc desc = net.desc();
  std::vector<vkgemm::GemmPlan> products, passes;
  std::vector<AppBuffer> activations;
  for (size_t i = 0; i < desc.layers.size(); ++i) {
    const int64_t k = i == 0 ? kWidth : desc.layers[i - 1].width, n = desc.layers[i].width;
    vkgemm::GemmDesc d{.type = vkgemm::DataType::f16, .c_type = vkgemm::DataType::f16, .m = net.rows, .n = n, .k = k};
    products.push_back(engine.plan(d, {.timestamps = true}));
    d.k = 0, d.alpha = 0.0, d.beta = 1.0, d.epilogue = desc.layers[i].epilogue;
    passes.push_back(engine.plan(d, {.timestamps = true}));
    if (i + 1 < desc.layers.size()) {
      activations.push_back(make_buffer(app, VkDeviceSize(net.rows * n) * 2, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false));
    }
  }
  const auto frame_once = [&] {
    submit(app, f, [&](VkCommandBuffer cmd) {
      after_previous_frame(cmd);
      for (size_t i = 0; i < products.size(); ++i) {
        const auto in = i == 0 ? s.features.range() : activations[i - 1].range();
        const auto out = i + 1 < products.size() ? activations[i].range() : s.output.range();
        if (i > 0) after_previous_frame(cmd);
        products[i].record(cmd, in, s.weights[i].range(), out);
        after_previous_frame(cmd);
        passes[i].record(cmd, out, out, out, s.biases[i].range());
      }
      record_to_image(cmd, s, false);
    });
  };
  warm_up(warmup_ms, frame_once);
  Timing t;
  for (int frame = 0; frame < frames; ++frame) {
    frame_once();
    double ms = 0.0;
    for (size_t i = 0; i < products.size(); ++i) ms += sum_ms({products[i].timing(), passes[i].timing()});
    t.ms.push_back(ms);
  }
  for (auto& b : activations) destroy(app, b);
  return t;
}

struct Args {
  uint32_t width = 1920, height = 1080;
  int frames = 10;
  double warmup_ms = 500.0;
  bool compare = false, validate = false;
};

// A number of milliseconds from 0 to 60000, or a refusal that says so (not a NaN or a word read as 0).
double parse_ms(const char* text) {
  char* end = nullptr;
  const double ms = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(ms >= 0.0 && ms <= 60000.0)) {
    throw std::runtime_error(std::string("--warmup-ms ") + text + ": give a number of milliseconds from 0 to 60000");
  }
  return ms;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--validate") a.validate = true;
    else if (arg == "--compare") a.compare = true;
    else if (arg == "--frames" && i + 1 < argc) a.frames = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--warmup-ms" && i + 1 < argc) a.warmup_ms = parse_ms(argv[++i]);
    else if (arg == "--size" && i + 1 < argc && std::sscanf(argv[++i], "%ux%u", &a.width, &a.height) == 2) continue;
    else throw std::runtime_error("unknown argument " + arg + " (--size WxH, --frames N, --warmup-ms MS, --compare, --validate)");
  }
  return a;
}

int run(const Args& args) {
  check(volkInitialize(), "volkInitialize (is libvulkan1 installed?)");
  App app;
  create_instance(app, args.validate);
  create_device(app);
  bool ok = true;
  {
    vkgemm::VulkanDevice adopted{app.instance, app.pd, app.dev, app.queue, app.family, app.api,
                                 vkGetInstanceProcAddr, &app.enabled};
    adopted.enabled_extensions = app.extensions;
    adopted.enabled_feature_chain = app.chain;  // what vkgemm may use: exactly what the device was created with
    vkgemm::Engine engine = vkgemm::adopt_device(adopted);
    const Frame f = make_frame(app);
    const Network net = make_network(args.width, args.height);
    Scene scene = make_scene(app, f, net, args.width, args.height);
    std::printf("%s: 64 -> 64 relu -> 64 relu -> 4 sigmoid, f16 with fp32 sums, over %ux%u pixels\n",
                engine.device().name.c_str(), args.width, args.height);
    std::printf("enabled:");
    for (const char* e : app.extensions) std::printf(" %s", e);
    std::printf("\n");
    const Timing fused = run_fused(app, f, engine, net, scene, args.frames, args.warmup_ms, ok);
    std::printf("fused chain: %.4f ms per frame (median of %d)\n", fused.median(), args.frames);
    if (args.compare) {
      const Timing plain = run_unfused(app, f, engine, net, scene, args.frames, args.warmup_ms);
      std::printf("plain products + elementwise passes: %.4f ms per frame (median of %d); fused is %.2fx faster\n",
                  plain.median(), args.frames, plain.median() / fused.median());
    }
    destroy(app, scene);
    vkDestroyFence(app.dev, f.fence, nullptr);
    vkDestroyCommandPool(app.dev, f.pool, nullptr);
  }  // the engine goes before the device it borrowed
  vkDestroyDevice(app.dev, nullptr);
  if (app.messenger) vkDestroyDebugUtilsMessengerEXT(app.instance, app.messenger, nullptr);
  vkDestroyInstance(app.instance, nullptr);
  if (g_messages) {
    std::printf("FAILED: %d validation messages\n", g_messages.load());
    return 3;
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
