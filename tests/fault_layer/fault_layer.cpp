// VK_LAYER_VKGEMM_fault: a Vulkan layer for the tests alone (never installed) that makes the Nth call of the
// calls it counts fail with a chosen result, as a driver would: VK_ERROR_OUT_OF_HOST_MEMORY or _DEVICE_MEMORY
// from an allocation or an object's creation, VK_ERROR_DEVICE_LOST from a submission or a wait. It sits in
// the loader's chain (enabled by VK_INSTANCE_LAYERS, found through VK_LAYER_PATH), so it sees every Vulkan
// call of the process: the engine's own device, an application's device the engine adopts, the drop-in
// BLAS's and the Python module's engines in their own processes.
//
// A failed call is not passed down: the driver never sees it, as when a driver refuses it. After an injected
// VK_ERROR_DEVICE_LOST the device stays lost, as a reset GPU does: every later submission, wait, poll and
// query of it returns VK_ERROR_DEVICE_LOST too. Each of those first waits for the device to go idle (through
// the layers below, so that the validation layer sees the work complete), so that nothing the driver still
// runs is freed under it once the engine gives up: the loss is a result, not a use after free.
//
// Control, in the process (fault_control.hpp: the test loads this library and finds these functions) or
// from the environment for a child process: VKGEMM_FAULT=N:RESULT[:FUNCTION] (RESULT a VkResult's name, N 0
// counting only, FUNCTION the one call N must be) arms it from the first call, and VKGEMM_FAULT_REPORT=path
// has it write what it saw when it is unloaded (its calls, the injections, the failed function, the trace).
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#define FAULT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// ---- what is counted and how it may fail ----

// The results a call may return by the specification, beside success: what the walk injects.
enum Fails : uint32_t { kHost = 1, kDevice = 2, kLost = 4, kMapFailed = 8 };
constexpr uint32_t kMemory = kHost | kDevice;

struct Counted {
  const char* name;
  uint32_t fails;
};

// Every device function the layer counts and hooks (its hook is the function of the same name without "vk"),
// with the failures the specification allows it: one list, expanded below into the count table, the next
// layer's table, its loading and the hooks.
#define FAULT_FUNCTIONS(X) \
  X(AllocateMemory, kMemory) \
  X(MapMemory, kMemory | kMapFailed) \
  X(BindBufferMemory, kMemory) \
  X(CreateBuffer, kMemory) \
  X(CreateShaderModule, kMemory) \
  X(CreatePipelineCache, kMemory) \
  X(CreatePipelineLayout, kMemory) \
  X(CreateDescriptorSetLayout, kMemory) \
  X(CreateComputePipelines, kMemory) \
  X(CreateDescriptorPool, kMemory) \
  X(AllocateDescriptorSets, kMemory) \
  X(CreateCommandPool, kMemory) \
  X(AllocateCommandBuffers, kMemory) \
  X(ResetCommandBuffer, kDevice) \
  X(BeginCommandBuffer, kMemory) \
  X(EndCommandBuffer, kMemory) \
  X(CreateFence, kMemory) \
  X(CreateSemaphore, kMemory) \
  X(CreateQueryPool, kMemory) \
  X(CreateEvent, kMemory) \
  X(GetEventStatus, kMemory | kLost) \
  X(ResetFences, kDevice) \
  X(QueueSubmit, kMemory | kLost) \
  X(WaitForFences, kMemory | kLost) \
  X(GetFenceStatus, kMemory | kLost) \
  X(WaitSemaphores, kMemory | kLost) \
  X(GetSemaphoreCounterValue, kMemory | kLost) \
  X(QueueWaitIdle, kMemory | kLost) \
  X(DeviceWaitIdle, kMemory | kLost) \
  X(GetQueryPoolResults, kMemory | kLost)

// Every function the layer counts: vkCreateDevice and the list above.
#define FAULT_COUNTED(name, fails) {"vk" #name, fails},
constexpr Counted kCounted[] = {{"vkCreateDevice", kMemory}, FAULT_FUNCTIONS(FAULT_COUNTED)};
#undef FAULT_COUNTED

uint32_t fails_of(const char* name) {
  for (const Counted& c : kCounted) {
    if (std::strcmp(c.name, name) == 0) return c.fails;
  }
  return 0;
}

// ---- the fault's state (one per process) ----

std::mutex g_lock;
bool g_armed = false;
uint64_t g_fail_at = 0;  // the counted call that fails (1 the first); 0: none
VkResult g_result = VK_SUCCESS;
std::string g_fail_only;  // fail it only where it is this function (empty: any)
uint64_t g_calls = 0, g_injected = 0;
std::string g_failed;               // the function that failed
std::vector<const char*> g_trace;   // each counted call's function, in order (the walk's list)

// Counts a call of `name` (one of kCounted) and says what it returns instead of running: VK_SUCCESS runs it.
VkResult count(const char* name) {
  std::lock_guard lock(g_lock);
  if (!g_armed) return VK_SUCCESS;
  ++g_calls;
  g_trace.push_back(name);
  if (g_calls != g_fail_at || (!g_fail_only.empty() && g_fail_only != name)) return VK_SUCCESS;
  ++g_injected;
  g_failed = name;
  return g_result;
}

// ---- dispatch: the next layer's functions per instance and per device (keyed by the loader's dispatch
// table pointer, which a device shares with its queues and command buffers) ----

void* key(const void* handle) { return *static_cast<void* const*>(handle); }

struct InstanceTable {
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  PFN_vkDestroyInstance destroy = nullptr;
};

struct DeviceTable {
  VkDevice device = VK_NULL_HANDLE;
  PFN_vkGetDeviceProcAddr gdpa = nullptr;
  PFN_vkDestroyDevice destroy = nullptr;
  std::atomic<bool> lost{false};
#define FAULT_NEXT(name, fails) PFN_vk##name vk##name = nullptr;
  FAULT_FUNCTIONS(FAULT_NEXT)
#undef FAULT_NEXT
};

std::mutex g_tables_lock;
std::unordered_map<void*, InstanceTable*> g_instances;
std::unordered_map<void*, DeviceTable*> g_devices;

InstanceTable& instance_table(const void* handle) {
  std::lock_guard lock(g_tables_lock);
  return *g_instances.at(key(handle));
}
DeviceTable& device_table(const void* handle) {
  std::lock_guard lock(g_tables_lock);
  return *g_devices.at(key(handle));
}

// Counts the call and returns the injected result (marking the device lost where it is DEVICE_LOST), or
// VK_SUCCESS where the call should run.
VkResult inject(DeviceTable& d, const char* name) {
  const VkResult r = count(name);
  if (r == VK_ERROR_DEVICE_LOST) d.lost = true;
  return r;
}

// ---- the intercepted device functions ----

#define FAULT_CREATE(name, ...)                                        \
  {                                                                    \
    DeviceTable& d = device_table(device);                             \
    if (const VkResult r = inject(d, #name); r != VK_SUCCESS) return r; \
    return d.name(device, __VA_ARGS__);                                \
  }

VKAPI_ATTR VkResult VKAPI_CALL AllocateMemory(VkDevice device, const VkMemoryAllocateInfo* info,
                                              const VkAllocationCallbacks* a, VkDeviceMemory* out)
    FAULT_CREATE(vkAllocateMemory, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL MapMemory(VkDevice device, VkDeviceMemory memory, VkDeviceSize offset, VkDeviceSize size,
                                         VkMemoryMapFlags flags, void** data)
    FAULT_CREATE(vkMapMemory, memory, offset, size, flags, data)
VKAPI_ATTR VkResult VKAPI_CALL BindBufferMemory(VkDevice device, VkBuffer buffer, VkDeviceMemory memory,
                                                VkDeviceSize offset)
    FAULT_CREATE(vkBindBufferMemory, buffer, memory, offset)
VKAPI_ATTR VkResult VKAPI_CALL CreateBuffer(VkDevice device, const VkBufferCreateInfo* info,
                                            const VkAllocationCallbacks* a, VkBuffer* out)
    FAULT_CREATE(vkCreateBuffer, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL CreateShaderModule(VkDevice device, const VkShaderModuleCreateInfo* info,
                                                  const VkAllocationCallbacks* a, VkShaderModule* out)
    FAULT_CREATE(vkCreateShaderModule, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL CreatePipelineCache(VkDevice device, const VkPipelineCacheCreateInfo* info,
                                                   const VkAllocationCallbacks* a, VkPipelineCache* out)
    FAULT_CREATE(vkCreatePipelineCache, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL CreatePipelineLayout(VkDevice device, const VkPipelineLayoutCreateInfo* info,
                                                    const VkAllocationCallbacks* a, VkPipelineLayout* out)
    FAULT_CREATE(vkCreatePipelineLayout, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL CreateDescriptorSetLayout(VkDevice device, const VkDescriptorSetLayoutCreateInfo* info,
                                                         const VkAllocationCallbacks* a, VkDescriptorSetLayout* out)
    FAULT_CREATE(vkCreateDescriptorSetLayout, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL CreateComputePipelines(VkDevice device, VkPipelineCache cache, uint32_t count_,
                                                      const VkComputePipelineCreateInfo* infos,
                                                      const VkAllocationCallbacks* a, VkPipeline* out) {
  DeviceTable& d = device_table(device);
  if (const VkResult r = inject(d, "vkCreateComputePipelines"); r != VK_SUCCESS) {
    for (uint32_t i = 0; i < count_; ++i) out[i] = VK_NULL_HANDLE;  // as the specification has it on failure
    return r;
  }
  return d.vkCreateComputePipelines(device, cache, count_, infos, a, out);
}
VKAPI_ATTR VkResult VKAPI_CALL CreateDescriptorPool(VkDevice device, const VkDescriptorPoolCreateInfo* info,
                                                    const VkAllocationCallbacks* a, VkDescriptorPool* out)
    FAULT_CREATE(vkCreateDescriptorPool, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL AllocateDescriptorSets(VkDevice device, const VkDescriptorSetAllocateInfo* info,
                                                      VkDescriptorSet* out)
    FAULT_CREATE(vkAllocateDescriptorSets, info, out)
VKAPI_ATTR VkResult VKAPI_CALL CreateCommandPool(VkDevice device, const VkCommandPoolCreateInfo* info,
                                                 const VkAllocationCallbacks* a, VkCommandPool* out)
    FAULT_CREATE(vkCreateCommandPool, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL AllocateCommandBuffers(VkDevice device, const VkCommandBufferAllocateInfo* info,
                                                      VkCommandBuffer* out)
    FAULT_CREATE(vkAllocateCommandBuffers, info, out)
VKAPI_ATTR VkResult VKAPI_CALL CreateFence(VkDevice device, const VkFenceCreateInfo* info,
                                           const VkAllocationCallbacks* a, VkFence* out)
    FAULT_CREATE(vkCreateFence, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL CreateSemaphore(VkDevice device, const VkSemaphoreCreateInfo* info,
                                               const VkAllocationCallbacks* a, VkSemaphore* out)
    FAULT_CREATE(vkCreateSemaphore, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL CreateQueryPool(VkDevice device, const VkQueryPoolCreateInfo* info,
                                               const VkAllocationCallbacks* a, VkQueryPool* out)
    FAULT_CREATE(vkCreateQueryPool, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL CreateEvent(VkDevice device, const VkEventCreateInfo* info,
                                           const VkAllocationCallbacks* a, VkEvent* out)
    FAULT_CREATE(vkCreateEvent, info, a, out)
VKAPI_ATTR VkResult VKAPI_CALL ResetFences(VkDevice device, uint32_t n, const VkFence* fences)
    FAULT_CREATE(vkResetFences, n, fences)
#undef FAULT_CREATE

// Command buffers and queues dispatch like their device (the same table pointer).
VKAPI_ATTR VkResult VKAPI_CALL ResetCommandBuffer(VkCommandBuffer cmd, VkCommandBufferResetFlags flags) {
  DeviceTable& d = device_table(cmd);
  if (const VkResult r = inject(d, "vkResetCommandBuffer"); r != VK_SUCCESS) return r;
  return d.vkResetCommandBuffer(cmd, flags);
}
VKAPI_ATTR VkResult VKAPI_CALL BeginCommandBuffer(VkCommandBuffer cmd, const VkCommandBufferBeginInfo* info) {
  DeviceTable& d = device_table(cmd);
  if (const VkResult r = inject(d, "vkBeginCommandBuffer"); r != VK_SUCCESS) return r;
  return d.vkBeginCommandBuffer(cmd, info);
}
// A failed vkEndCommandBuffer leaves the buffer invalid, which a reset (or vkBeginCommandBuffer's implicit
// one) ends; one not passed down would leave it recording below, which nothing may begin again. So the
// recording is ended below, and the failure reported.
VKAPI_ATTR VkResult VKAPI_CALL EndCommandBuffer(VkCommandBuffer cmd) {
  DeviceTable& d = device_table(cmd);
  const VkResult r = inject(d, "vkEndCommandBuffer");
  const VkResult ended = d.vkEndCommandBuffer(cmd);
  return r != VK_SUCCESS ? r : ended;
}

// Submissions and waits: a lost device submits nothing and reports the loss from every wait and query.
VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t n, const VkSubmitInfo* submits, VkFence fence) {
  DeviceTable& d = device_table(queue);
  if (const VkResult r = inject(d, "vkQueueSubmit"); r != VK_SUCCESS) return r;
  if (d.lost) return VK_ERROR_DEVICE_LOST;
  return d.vkQueueSubmit(queue, n, submits, fence);
}

// A wait's, poll's or query's result: the injected failure (out of memory: nothing waited), the loss (the
// device idle first: what was submitted before completed on the working driver below), or the call's own.
template <typename Call>
VkResult waited(DeviceTable& d, const char* name, Call&& call) {
  const VkResult r = inject(d, name);
  if (r != VK_SUCCESS && r != VK_ERROR_DEVICE_LOST) return r;
  if (d.lost) {
    d.vkDeviceWaitIdle(d.device);
    return VK_ERROR_DEVICE_LOST;
  }
  return call();
}

VKAPI_ATTR VkResult VKAPI_CALL WaitForFences(VkDevice device, uint32_t n, const VkFence* fences, VkBool32 all,
                                             uint64_t timeout) {
  DeviceTable& d = device_table(device);
  return waited(d, "vkWaitForFences", [&] { return d.vkWaitForFences(device, n, fences, all, timeout); });
}
VKAPI_ATTR VkResult VKAPI_CALL GetFenceStatus(VkDevice device, VkFence fence) {
  DeviceTable& d = device_table(device);
  return waited(d, "vkGetFenceStatus", [&] { return d.vkGetFenceStatus(device, fence); });
}
VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphores(VkDevice device, const VkSemaphoreWaitInfo* info, uint64_t timeout) {
  DeviceTable& d = device_table(device);
  return waited(d, "vkWaitSemaphores", [&] { return d.vkWaitSemaphores(device, info, timeout); });
}
VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValue(VkDevice device, VkSemaphore semaphore, uint64_t* value) {
  DeviceTable& d = device_table(device);
  return waited(d, "vkGetSemaphoreCounterValue",
                [&] { return d.vkGetSemaphoreCounterValue(device, semaphore, value); });
}
VKAPI_ATTR VkResult VKAPI_CALL GetEventStatus(VkDevice device, VkEvent event) {
  DeviceTable& d = device_table(device);
  return waited(d, "vkGetEventStatus", [&] { return d.vkGetEventStatus(device, event); });
}
VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue queue) {
  DeviceTable& d = device_table(queue);
  return waited(d, "vkQueueWaitIdle", [&] { return d.vkQueueWaitIdle(queue); });
}
VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice device) {
  DeviceTable& d = device_table(device);
  return waited(d, "vkDeviceWaitIdle", [&] { return d.vkDeviceWaitIdle(device); });
}
VKAPI_ATTR VkResult VKAPI_CALL GetQueryPoolResults(VkDevice device, VkQueryPool pool, uint32_t first, uint32_t n,
                                                   size_t size, void* data, VkDeviceSize stride,
                                                   VkQueryResultFlags flags) {
  DeviceTable& d = device_table(device);
  return waited(d, "vkGetQueryPoolResults",
                [&] { return d.vkGetQueryPoolResults(device, pool, first, n, size, data, stride, flags); });
}

// ---- the layer's chain: instance and device creation, and the lookups ----

template <typename Info, typename Link>
Link* link_info(const Info* info, VkStructureType type) {
  auto* p = static_cast<Link*>(const_cast<void*>(info->pNext));
  while (p && !(p->sType == type && p->function == VK_LAYER_LINK_INFO)) {
    p = static_cast<Link*>(const_cast<void*>(p->pNext));
  }
  return p;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* info, const VkAllocationCallbacks* a,
                                              VkInstance* out) {
  auto* link =
      link_info<VkInstanceCreateInfo, VkLayerInstanceCreateInfo>(info, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
  if (!link) return VK_ERROR_INITIALIZATION_FAILED;
  const PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  const VkResult r = create(info, a, out);
  if (r != VK_SUCCESS) return r;
  auto* t = new InstanceTable;
  t->gipa = gipa;
  t->destroy = reinterpret_cast<PFN_vkDestroyInstance>(gipa(*out, "vkDestroyInstance"));
  std::lock_guard lock(g_tables_lock);
  g_instances[key(*out)] = t;
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* a) {
  InstanceTable* t = nullptr;
  {
    std::lock_guard lock(g_tables_lock);
    const auto it = g_instances.find(key(instance));
    if (it == g_instances.end()) return;
    t = it->second;
    g_instances.erase(it);
  }
  t->destroy(instance, a);
  delete t;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physical, const VkDeviceCreateInfo* info,
                                            const VkAllocationCallbacks* a, VkDevice* out) {
  auto* link =
      link_info<VkDeviceCreateInfo, VkLayerDeviceCreateInfo>(info, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
  if (!link) return VK_ERROR_INITIALIZATION_FAILED;
  const PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  const PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  if (const VkResult r = count("vkCreateDevice"); r != VK_SUCCESS) return r;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  auto create = reinterpret_cast<PFN_vkCreateDevice>(gipa(VK_NULL_HANDLE, "vkCreateDevice"));
  const VkResult r = create(physical, info, a, out);
  if (r != VK_SUCCESS) return r;
  auto* t = new DeviceTable;
  t->device = *out;
  t->gdpa = gdpa;
  t->destroy = reinterpret_cast<PFN_vkDestroyDevice>(gdpa(*out, "vkDestroyDevice"));
#define FAULT_LOAD(name, fails) t->vk##name = reinterpret_cast<PFN_vk##name>(gdpa(*out, "vk" #name));
  FAULT_FUNCTIONS(FAULT_LOAD)
#undef FAULT_LOAD
  // Vulkan 1.2's names where the device has only the extensions' (the loader answers the core name null).
  if (!t->vkWaitSemaphores) {
    t->vkWaitSemaphores = reinterpret_cast<PFN_vkWaitSemaphores>(gdpa(*out, "vkWaitSemaphoresKHR"));
  }
  if (!t->vkGetSemaphoreCounterValue) {
    t->vkGetSemaphoreCounterValue =
        reinterpret_cast<PFN_vkGetSemaphoreCounterValue>(gdpa(*out, "vkGetSemaphoreCounterValueKHR"));
  }
  std::lock_guard lock(g_tables_lock);
  g_devices[key(*out)] = t;
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* a) {
  DeviceTable* t = nullptr;
  {
    std::lock_guard lock(g_tables_lock);
    const auto it = g_devices.find(key(device));
    if (it == g_devices.end()) return;
    t = it->second;
    g_devices.erase(it);
  }
  t->destroy(device, a);
  delete t;
}

PFN_vkVoidFunction device_function(const char* name) {
#define FAULT_HOOK(vk_name, fn) \
  if (std::strcmp(name, #vk_name) == 0) return reinterpret_cast<PFN_vkVoidFunction>(fn);
#define FAULT_LISTED_HOOK(name, fails) FAULT_HOOK(vk##name, name)
  FAULT_FUNCTIONS(FAULT_LISTED_HOOK)
  FAULT_HOOK(vkWaitSemaphoresKHR, WaitSemaphores)
  FAULT_HOOK(vkGetSemaphoreCounterValueKHR, GetSemaphoreCounterValue)
  FAULT_HOOK(vkDestroyDevice, DestroyDevice)
#undef FAULT_LISTED_HOOK
#undef FAULT_HOOK
  return nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* name) {
  if (const PFN_vkVoidFunction f = device_function(name)) return f;
  return device_table(device).gdpa(device, name);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance, const char* name) {
  if (std::strcmp(name, "vkGetInstanceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(GetInstanceProcAddr);
  if (std::strcmp(name, "vkCreateInstance") == 0) return reinterpret_cast<PFN_vkVoidFunction>(CreateInstance);
  if (std::strcmp(name, "vkDestroyInstance") == 0) return reinterpret_cast<PFN_vkVoidFunction>(DestroyInstance);
  if (std::strcmp(name, "vkCreateDevice") == 0) return reinterpret_cast<PFN_vkVoidFunction>(CreateDevice);
  if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(GetDeviceProcAddr);
  if (const PFN_vkVoidFunction f = device_function(name)) return f;
  if (!instance) return nullptr;
  return instance_table(instance).gipa(instance, name);
}

// ---- control from the environment (a child process) ----

VkResult result_named(const char* name) {
  static const std::pair<const char*, VkResult> kNames[] = {
      {"VK_ERROR_OUT_OF_HOST_MEMORY", VK_ERROR_OUT_OF_HOST_MEMORY},
      {"VK_ERROR_OUT_OF_DEVICE_MEMORY", VK_ERROR_OUT_OF_DEVICE_MEMORY},
      {"VK_ERROR_DEVICE_LOST", VK_ERROR_DEVICE_LOST},
      {"VK_ERROR_MEMORY_MAP_FAILED", VK_ERROR_MEMORY_MAP_FAILED},
  };
  for (const auto& [n, r] : kNames) {
    if (std::strcmp(n, name) == 0) return r;
  }
  return VK_SUCCESS;
}

// What the environment asks, read when the loader loads the layer; the report written at exit.
struct FromEnvironment {
  FromEnvironment() {
    const char* spec = std::getenv("VKGEMM_FAULT");
    if (!spec) return;
    char* rest = nullptr;
    g_fail_at = std::strtoull(spec, &rest, 10);
    const std::string tail = rest && *rest == ':' ? rest + 1 : "";
    const size_t colon = tail.find(':');
    g_result = result_named(tail.substr(0, colon).c_str());
    g_fail_only = colon == std::string::npos ? "" : tail.substr(colon + 1);
    g_armed = true;
  }
  ~FromEnvironment() {
    const char* path = std::getenv("VKGEMM_FAULT_REPORT");
    if (!path) return;
    std::lock_guard lock(g_lock);
    if (FILE* f = std::fopen(path, "w")) {
      std::fprintf(f, "calls %llu\ninjected %llu\nfailed %s\n", static_cast<unsigned long long>(g_calls),
                   static_cast<unsigned long long>(g_injected), g_failed.empty() ? "-" : g_failed.c_str());
      for (const char* name : g_trace) std::fprintf(f, "%s\n", name);
      std::fclose(f);
    }
  }
};
const FromEnvironment g_environment;

}  // namespace

// ---- the loader's entry point ----

FAULT_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* v) {
  if (v->loaderLayerInterfaceVersion < 2) return VK_ERROR_INITIALIZATION_FAILED;
  v->loaderLayerInterfaceVersion = 2;
  v->pfnGetInstanceProcAddr = GetInstanceProcAddr;
  v->pfnGetDeviceProcAddr = GetDeviceProcAddr;
  v->pfnGetPhysicalDeviceProcAddr = nullptr;
  return VK_SUCCESS;
}

// ---- control from the test, in the process (fault_control.hpp) ----

// Counts from now, and fails counted call `fail_at` (1 the first; 0: none) with `result`, where it is a call of
// `function` (null: whatever it is; a run whose calls came in another order then fails none).
FAULT_EXPORT void vkgemm_fault_arm(uint64_t fail_at, int32_t result, const char* function) {
  std::lock_guard lock(g_lock);
  g_armed = true;
  g_fail_at = fail_at;
  g_result = static_cast<VkResult>(result);
  g_fail_only = function ? function : "";
  g_calls = g_injected = 0;
  g_failed.clear();
  g_trace.clear();
}
// Stops counting and failing (a lost device stays lost); returns whether it was armed. resume() counts on
// from where it stopped.
FAULT_EXPORT bool vkgemm_fault_disarm() {
  std::lock_guard lock(g_lock);
  const bool was = g_armed;
  g_armed = false;
  return was;
}
FAULT_EXPORT void vkgemm_fault_resume() {
  std::lock_guard lock(g_lock);
  g_armed = true;
}
FAULT_EXPORT uint64_t vkgemm_fault_calls() {
  std::lock_guard lock(g_lock);
  return g_calls;
}
FAULT_EXPORT uint64_t vkgemm_fault_injected() {
  std::lock_guard lock(g_lock);
  return g_injected;
}
// The function of counted call `n` (1 the first) since the last arm, or null past the last.
FAULT_EXPORT const char* vkgemm_fault_call(uint64_t n) {
  std::lock_guard lock(g_lock);
  return n >= 1 && n <= g_trace.size() ? g_trace[n - 1] : nullptr;
}
// The failures the specification allows function `name` (Fails bits: 1 host memory, 2 device memory,
// 4 device lost, 8 map failed); 0 for a function the layer does not count.
FAULT_EXPORT uint32_t vkgemm_fault_fails(const char* name) { return fails_of(name); }
