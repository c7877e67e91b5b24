// Finding devices: what each one offers (DeviceInfo). Which one an engine takes: device_choice.hpp.
#pragma once

#include <string>
#include <vector>

#include <volk.h>

#include "vk/physical_device.hpp"
#include "vkgemm/device_info.hpp"

namespace vkgemm {

// instance_version: the API version the instance was created for; structs of later versions are not
// queried (the validation layer reports them, and the driver may not honour them).
std::vector<PhysicalDevice> enumerate_devices(VkInstance instance, uint32_t instance_version);

// Their DeviceInfo, in the same order (which device an engine takes: device_choice.hpp).
std::vector<DeviceInfo> device_infos(std::vector<PhysicalDevice> devices);

}  // namespace vkgemm
