// The one list of vkgemm's kernels, in auto's order of preference. Each entry X(name, value) makes its
// vkgemm::Kernel enumerator `name = value` (vkgemm/types.hpp; 3 is Kernel::automatic, which is no kernel),
// the declaration of the kernel's spec `name##_spec` (defined in engine/src/kernels/<name>.cpp) and its
// place in kernel_specs() (engine/src/kernels/registry.cpp), and so to_string, parse_kernel, all_kernels,
// the CLI's kernel names and every list of kernels in messages.
//
//   ozaki     f64, f32 emulated through exact int8 products (Ozaki scheme II); auto only with Precision::emulated
//   gemv      every type: GEMV and products with M or N at most 16, streaming the large operand once; auto by
//             its rule (kernels/gemv.cpp), before the tuning table
//   thin      f16, bf16: a long op(A) against a small op(B) held in registers (thin layers); auto by its rule
//             (kernels/thin.cpp)
//   coopmat2  f16, bf16, i8, u8: workgroup-scope matrices loaded with tensor layouts (VK_NV_cooperative_matrix2)
//   coopmat   f16, bf16, i8, u8: subgroup-scope cooperative matrices (VK_KHR_cooperative_matrix), tiles in shared memory
//   blocked   f32, f64: register-blocked, vectorized, double-buffered; configured by BlockedConfig
//   tiled     square shared-memory tiles; the tile size is chosen at run time
//   naive     one invocation per element of C
//
// Adding a kernel: docs/architecture.md.
#pragma once

#define VKGEMM_LISTED_KERNELS(X) \
  X(ozaki, 6)                    \
  X(gemv, 7)                     \
  X(thin, 8)                     \
  X(coopmat2, 5)                 \
  X(coopmat, 4)                  \
  X(blocked, 2)                  \
  X(tiled, 1)                    \
  X(naive, 0)

#define VKGEMM_KERNELS(X) VKGEMM_LISTED_KERNELS(X) VKGEMM_EXTRA_KERNELS(X)

// Kernels a build adds after the list: none, except in the build that shows a kernel added by the steps of
// docs/architecture.md (tests/add_kernel/: its entry makes its enumerator as the list's entries do).
#ifndef VKGEMM_EXTRA_KERNELS
#define VKGEMM_EXTRA_KERNELS(X)
#endif
