// What vkgemm knows about a Vulkan device: enough to choose one, to explain a refusal and to label results.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace vkgemm {

enum class DeviceType { other, integrated_gpu, discrete_gpu, virtual_gpu, cpu };

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
  // VK_KHR_pipeline_executable_properties with pipelineExecutableInfo: the driver's statistics of each
  // compiled pipeline (registers, shared memory, spills; Engine::pipeline_statistics). True when the device
  // (as vkgemm created it) has it on; false for an adopted device and where the driver lacks it.
  bool pipeline_statistics = false;
  bool timestamps = false;                   // the compute queue has timestampValidBits > 0
  uint32_t timestamp_valid_bits = 0;
  float timestamp_period_ns = 0.0f;
  bool has_compute_queue = false;
};

std::string_view to_string(DeviceType type) noexcept;

}  // namespace vkgemm
