#include "device/coopmat_query.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace vkgemm {
namespace {

[[maybe_unused]] bool has(const std::vector<std::string>& extensions, const char* name) {
  return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
}

#if defined(VK_KHR_cooperative_matrix)
std::string component_name(VkComponentTypeKHR t) {
  switch (static_cast<int64_t>(t)) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR: return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_KHR: return "f32";
    case VK_COMPONENT_TYPE_FLOAT64_KHR: return "f64";
    case VK_COMPONENT_TYPE_SINT8_KHR: return "i8";
    case VK_COMPONENT_TYPE_SINT16_KHR: return "i16";
    case VK_COMPONENT_TYPE_SINT32_KHR: return "i32";
    case VK_COMPONENT_TYPE_SINT64_KHR: return "i64";
    case VK_COMPONENT_TYPE_UINT8_KHR: return "u8";
    case VK_COMPONENT_TYPE_UINT16_KHR: return "u16";
    case VK_COMPONENT_TYPE_UINT32_KHR: return "u32";
    case VK_COMPONENT_TYPE_UINT64_KHR: return "u64";
    case 1000141000: return "bf16";  // VK_COMPONENT_TYPE_BFLOAT16_KHR (VK_KHR_shader_bfloat16)
    case 1000491002: return "e4m3";
    case 1000491003: return "e5m2";
    default: return fmt::format("type {}", static_cast<int64_t>(t));
  }
}

std::string scope_name(VkScopeKHR s) {
  switch (s) {
    case VK_SCOPE_DEVICE_KHR: return "device";
    case VK_SCOPE_WORKGROUP_KHR: return "workgroup";
    case VK_SCOPE_SUBGROUP_KHR: return "subgroup";
    case VK_SCOPE_QUEUE_FAMILY_KHR: return "queue family";
    default: return fmt::format("scope {}", static_cast<int>(s));
  }
}

template <typename P>
CooperativeMatrixShape shape_of(const P& p, uint32_t m, uint32_t n, uint32_t k) {
  CooperativeMatrixShape s;
  s.m = m, s.n = n, s.k = k;
  s.a_type = component_name(p.AType);
  s.b_type = component_name(p.BType);
  s.c_type = component_name(p.CType);
  s.result_type = component_name(p.ResultType);
  s.scope = scope_name(p.scope);
  s.saturating = p.saturatingAccumulation == VK_TRUE;
  return s;
}
#endif

}  // namespace

void query_cooperative_matrices([[maybe_unused]] VkInstance instance, [[maybe_unused]] VkPhysicalDevice pd,
                                const std::vector<std::string>& extensions, DeviceInfo& info) {
  info.coopmat_nv = std::find(extensions.begin(), extensions.end(), "VK_NV_cooperative_matrix") != extensions.end();
#if defined(VK_KHR_cooperative_matrix)
  if (has(extensions, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) && info.vulkan13) {
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f, {}};
    vkGetPhysicalDeviceFeatures2(pd, &features);
    const auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    if (f.cooperativeMatrix == VK_TRUE && get) {
      uint32_t count = 0;
      if (get(pd, &count, nullptr) == VK_SUCCESS) {
        std::vector<VkCooperativeMatrixPropertiesKHR> props(count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
        if (get(pd, &count, props.data()) == VK_SUCCESS) {
          for (const auto& p : props) info.coopmat_shapes.push_back(shape_of(p, p.MSize, p.NSize, p.KSize));
          info.coopmat_khr = true;
        }
      }
    }
  }
#endif
#if defined(VK_NV_cooperative_matrix2)
  if (info.coopmat_khr && has(extensions, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME)) {
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f, {}};
    vkGetPhysicalDeviceFeatures2(pd, &features);
    VkPhysicalDeviceCooperativeMatrix2PropertiesNV p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p2, {}};
    vkGetPhysicalDeviceProperties2(pd, &props2);
    info.coopmat2_max_workgroup_invocations = p2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
    const auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
    // What the coopmat2 kernel uses: workgroup-scope matrices of flexible size, tensor-layout loads and stores,
    // conversion of the accumulator to the output type, and per-element operations (a bf16 C rounded first).
    const bool features_ok = f.cooperativeMatrixWorkgroupScope && f.cooperativeMatrixFlexibleDimensions &&
                             f.cooperativeMatrixTensorAddressing && f.cooperativeMatrixConversions &&
                             f.cooperativeMatrixPerElementOperations;
    if (features_ok && get) {
      uint32_t count = 0;
      if (get(pd, &count, nullptr) == VK_SUCCESS) {
        std::vector<VkCooperativeMatrixFlexibleDimensionsPropertiesNV> props(
            count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV});
        if (get(pd, &count, props.data()) == VK_SUCCESS) {
          for (const auto& p : props) {
            CooperativeMatrixShape s = shape_of(p, p.MGranularity, p.NGranularity, p.KGranularity);
            s.flexible = true;
            s.workgroup_invocations = p.workgroupInvocations;
            info.coopmat2_shapes.push_back(s);
          }
          info.coopmat2 = true;
        }
      }
    }
  }
#endif
}

}  // namespace vkgemm
