// What vkgemm knows about a Vulkan device: enough to choose one, to explain a refusal and to label results.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace vkgemm {

enum class DeviceType { other, integrated_gpu, discrete_gpu, virtual_gpu, cpu };

// One cooperative-matrix configuration a device offers: A is m x k, B k x n, C and the result m x n.
// Types are spelled "f16", "f32", "bf16", "i8", "u8", "i32", ...; scope "subgroup", "workgroup", ...
struct CooperativeMatrixShape {
  uint32_t m = 0, n = 0, k = 0;  // for flexible (NV) entries: the granularity each dimension must be a multiple of
  std::string a_type, b_type, c_type, result_type;
  std::string scope;
  bool saturating = false;
  bool flexible = false;                // from VK_NV_cooperative_matrix2's flexible-dimensions list
  uint32_t workgroup_invocations = 0;   // flexible entries: the workgroup size they need (0: any)
};

struct DeviceInfo {
  uint32_t index = 0;           // position in the loader's enumeration, as --device takes it
  std::string name;
  uint32_t vendor_id = 0;
  std::string vendor;           // "NVIDIA", "AMD", "Intel", "Mesa (CPU)", ... or the id in hex
  DeviceType type = DeviceType::other;
  std::string driver_name;      // VkPhysicalDeviceDriverProperties::driverName
  std::string driver_info;      // VkPhysicalDeviceDriverProperties::driverInfo
  std::string driver_version;   // decoded the vendor's way
  std::string api_version;      // "1.3.239"
  uint32_t subgroup_size = 0;
  uint32_t max_shared_memory = 0;            // maxComputeSharedMemorySize, bytes
  uint32_t max_workgroup_invocations = 0;    // maxComputeWorkGroupInvocations
  std::array<uint32_t, 3> max_workgroup_size{};
  std::array<uint32_t, 3> max_workgroup_count{};
  uint64_t max_storage_buffer_range = 0;     // bytes
  uint64_t max_allocation_size = 0;          // maxMemoryAllocationSize, bytes
  uint64_t device_local_memory = 0;          // largest device-local heap, bytes
  bool float64 = false;                      // shaderFloat64
  bool float16 = false;                      // shaderFloat16
  // shaderDenormPreserveFloat16, 32 and 64 (Vulkan 1.2's float controls): whether a shader may ask to keep
  // subnormals of that width (DenormPreserve). vkgemm's shaders do not ask, and without the request a device
  // may flush them: NVIDIA's driver 580 flushes fp32 sums below 2^-126 (docs/correctness.md).
  std::array<bool, 3> subnormals_on_request{};
  bool storage16 = false;                    // storageBuffer16BitAccess
  bool storage8 = false;                     // storageBuffer8BitAccess
  bool vulkan_memory_model = false;          // vulkanMemoryModel
  // vulkanMemoryModelDeviceScope: where vulkanMemoryModel is on, a shader may use Device scope (an atomic on a
  // buffer, memoryBarrierBuffer) only with it on too (device_scope below).
  bool vulkan_memory_model_device_scope = false;
  bool vulkan13 = false;                     // the device and the instance speak Vulkan 1.3 (SPIR-V 1.6 shaders)
  bool subgroup_size_control = false;        // subgroupSizeControl and computeFullSubgroups
  bool int8 = false;                         // shaderInt8 (int8 cooperative matrices: vkgemm peak, the kernels)
  bool integer_dot = false;                  // shaderIntegerDotProduct (Vulkan 1.3; vkgemm peak's int8 dot row)
  // VK_KHR_shader_bfloat16: shaderBFloat16Type and shaderBFloat16CooperativeMatrix (bf16 cooperative matrices:
  // the coopmat and coopmat2 kernels' bf16, vkgemm peak's bf16 rows).
  bool bfloat16 = false;
  bool bfloat16_coopmat = false;
  uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  // How many workgroups run side by side: the compute units (NVIDIA SMs, AMD CUs, CPU threads) and the
  // invocations one holds at once, as the device reports them (VK_NV_shader_sm_builtins: shaderSMCount and
  // shaderWarpsPerSM; VK_AMD_shader_core_properties: engines x arrays x CUs, wavefronts per SIMD). 0: not
  // reported (the planner then estimates; compute_units_from says which).
  uint32_t compute_units = 0;
  uint32_t invocations_per_compute_unit = 0;
  std::string compute_units_from;  // "VK_NV_shader_sm_builtins", "VK_AMD_shader_core_properties",
                                   // "CPU threads", or "" when unknown
  // Cooperative matrices. coopmat_khr: VK_KHR_cooperative_matrix with its cooperativeMatrix feature;
  // coopmat_shapes: vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR. coopmat2: VK_NV_cooperative_matrix2
  // with workgroup scope, flexible dimensions and tensor addressing; coopmat2_shapes: its flexible list.
  // coopmat_nv: only whether VK_NV_cooperative_matrix (the older extension) is there; vkgemm does not use it.
  bool coopmat_khr = false;
  bool coopmat2 = false;
  bool coopmat_nv = false;
  uint32_t coopmat2_max_workgroup_invocations = 0;  // maxCooperativeMatrixWorkgroupSize... of the NV extension
  std::vector<CooperativeMatrixShape> coopmat_shapes;
  std::vector<CooperativeMatrixShape> coopmat2_shapes;
  // VK_KHR_pipeline_executable_properties with pipelineExecutableInfo: the driver's statistics of each
  // compiled pipeline (registers, shared memory, spills; Engine::pipeline_statistics). True when the device
  // (as vkgemm created it) has it on; false for an adopted device and where the driver lacks it.
  bool pipeline_statistics = false;
  // VK_KHR_push_descriptor with maxPushDescriptors of at least the kernels' 3 bindings, on for the device as
  // vkgemm uses it (an adopted device: where the application enabled the extension; off under
  // VKGEMM_TEST_NO_PUSH_DESCRIPTOR=1): plans then push each dispatch's descriptors, with no descriptor set
  // and no pending limit. False: each plan records from its ring of descriptor sets (GemmPlanOptions::max_pending).
  bool push_descriptor = false;
  uint32_t max_push_descriptors = 0;         // maxPushDescriptors; 0 without the extension
  // VK_EXT_external_memory_host, on for the device as vkgemm uses it (an adopted device: where the application
  // enabled the extension), with host allocations importable as transfer buffers: the host-memory calls copy
  // straight from and to the caller's pages (docs/design/host-copies.md). imported_host_alignment:
  // minImportedHostPointerAlignment (0 without the extension).
  bool host_import = false;
  uint64_t imported_host_alignment = 0;
  // The queues of a transfer-only family (a discrete GPU's copy engines; 0: none, and for an adopted device):
  // the host-memory products cut into panels move their copies there, beside the products, on up to two of
  // them (one a direction).
  uint32_t copy_queues = 0;
  bool timestamps = false;                   // the compute queue has timestampValidBits > 0
  // hostQueryReset (Vulkan 1.2) on for the device as vkgemm uses it (an adopted device: where the application
  // enabled it): the engine's own synchronous products (Engine::gemm and the other calls that wait) reset their
  // timestamp queries on the host before submitting instead of recording vkCmdResetQueryPool, a GPU-side
  // command that costs a small product microseconds. Plans recorded into the application's command buffers
  // always reset in the command buffer (the host cannot know when their earlier submissions completed).
  bool host_query_reset = false;
  uint32_t timestamp_valid_bits = 0;
  float timestamp_period_ns = 0.0f;
  bool has_compute_queue = false;
};

std::string_view to_string(DeviceType type) noexcept;

enum class DataType;
// The device feature an element type of A and B needs and `device` lacks ("shaderFloat64", "shaderFloat16",
// "storageBuffer16BitAccess", "storageBuffer8BitAccess"); empty when it has them all.
std::string_view missing_feature(const DeviceInfo& device, DataType input) noexcept;

}  // namespace vkgemm
