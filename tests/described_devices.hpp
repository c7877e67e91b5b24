// Described devices for the planner's tests: an H200 as its driver lists it (f16 and int8 cooperative-matrix
// shapes, coopmat2's workgroup-scope flexible ones), without running on one.
#pragma once

#include <cstdint>
#include <utility>

#include "vkgemm/device_info.hpp"

namespace vkgemm::test {

inline CooperativeMatrixShape shape(uint32_t m, uint32_t n, uint32_t k, const char* acc, const char* scope,
                             uint32_t invocations = 0, bool flexible = false) {
  CooperativeMatrixShape s;
  s.m = m, s.n = n, s.k = k;
  s.a_type = "f16", s.b_type = "f16", s.c_type = acc, s.result_type = acc;
  s.scope = scope;
  s.flexible = flexible;
  s.workgroup_invocations = invocations;
  return s;
}

inline DeviceInfo nvidia() {
  DeviceInfo d;
  d.name = "described H200";
  d.type = DeviceType::discrete_gpu;
  d.compute_units = 132;  // VK_NV_shader_sm_builtins' shaderSMCount on an H200
  d.float16 = d.storage16 = d.vulkan_memory_model = d.vulkan13 = d.subgroup_size_control = true;
  d.vulkan_memory_model_device_scope = true;
  d.min_subgroup_size = d.max_subgroup_size = d.subgroup_size = 32;
  d.max_shared_memory = 48 * 1024;
  d.max_workgroup_invocations = 1024;
  d.max_workgroup_size = {1024, 1024, 64};
  d.max_workgroup_count = {2147483647u, 65535, 65535};
  d.max_storage_buffer_range = 0xFFFFFFFFull;  // 4 GiB - 1
  d.coopmat_khr = d.coopmat2 = true;
  for (const char* acc : {"f16", "f32"}) {
    d.coopmat_shapes.push_back(shape(16, 8, 16, acc, "subgroup"));
    d.coopmat_shapes.push_back(shape(16, 8, 8, acc, "subgroup"));
    d.coopmat_shapes.push_back(shape(16, 16, 16, acc, "subgroup"));
    for (uint32_t inv : {32u, 64u, 128u, 256u}) d.coopmat2_shapes.push_back(shape(16, 16, 16, acc, "workgroup", inv, true));
  }
  return d;
}

// nvidia() with the H100's bf16 shape: 16x16x16 bf16*bf16+f32 at subgroup scope (VK_KHR_shader_bfloat16).
inline DeviceInfo nvidia_bf16() {
  DeviceInfo d = nvidia();
  d.bfloat16 = d.bfloat16_coopmat = true;
  CooperativeMatrixShape s = shape(16, 16, 16, "f32", "subgroup");
  s.a_type = s.b_type = "bf16";
  d.coopmat_shapes.push_back(s);
  return d;
}

// nvidia() with what the H100 lists besides f16: 16x16x32 and 16x8x32 i8*i8+i32 and u8*u8+u32 at subgroup
// scope, and workgroup-scope flexible int8 shapes for coopmat2.
inline DeviceInfo nvidia_int8() {
  DeviceInfo d = nvidia();
  d.int8 = d.storage8 = true;
  for (const auto& [ab, acc] : {std::pair{"i8", "i32"}, {"u8", "u32"}}) {
    for (const uint32_t n : {16u, 8u}) {
      CooperativeMatrixShape s = shape(16, n, 32, acc, "subgroup");
      s.a_type = s.b_type = ab;
      d.coopmat_shapes.push_back(s);
    }
    for (const uint32_t inv : {128u, 256u}) {
      CooperativeMatrixShape s = shape(16, 16, 32, acc, "workgroup", inv, true);
      s.a_type = s.b_type = ab;
      d.coopmat2_shapes.push_back(s);
    }
  }
  return d;
}

}  // namespace vkgemm::test
