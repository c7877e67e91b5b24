#version 450
#extension GL_GOOGLE_include_directive : require
// The naive kernel: one invocation per element of C, every operand read from global memory.
#include "gemm_interface.glsl"

// Specialization constants: each kernel's ids are its own, written here once; the host sets them by name
// (kernels/registry.hpp's SpecConstant).
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 0) const uint WG_X = 16;  // the workgroup's sides
layout(constant_id = 1) const uint WG_Y = 16;

void main() {
  const uint col = gl_GlobalInvocationID.x;
  const uint row = gl_GlobalInvocationID.y;
  const uint batch = gemm_batch();
  if (row >= p.M || col >= p.N) {
    return;  // the grid is rounded up to whole workgroups
  }
  ACC_T acc = ACC_T(0);
  for (uint k = 0; k < p.K; ++k) {
    acc += ACC_T(load_a(batch, row, k)) * ACC_T(load_b(batch, k, col));
  }
  store_c(batch, row, col, acc);
}
