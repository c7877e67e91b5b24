// The one table of vkgemm's enumerations: each list below names every enumerator once, in the order of its
// number (the first is 0), with its spelling. The C++ enums (types.hpp, blas.hpp, options.hpp, error.hpp)
// are made from them, and so are to_string, the parse_* functions, the all_* lists, the C ABI's
// vkgemm_enum_name (which the Python module reads its constants from at run time), the CLI's choices and the
// messages that list what a call accepts. The C header's numbered copies (vkgemm.h's vkgemm_type) and the
// shaders' type table (shaders/CMakeLists.txt) are checked against these by the names.drift test.
// The kernels' list is vkgemm/kernel_list.hpp (each kernel's number is its own there).
//
// Each entry: X(enumerator, "spelling"). Comments inside a list are /* */: a // comment would swallow the
// line's continuation.
#pragma once

// A, B and C's element types (types.hpp's DataType).
#define VKGEMM_DATA_TYPES(X) \
  X(f32, "f32")              \
  X(i32, "i32")              \
  X(f64, "f64")              \
  X(f16, "f16")              \
  X(bf16, "bf16")            \
  X(i8, "i8")                \
  X(u8, "u8")

// The fused epilogue's activations (blas.hpp's Activation), y = f(x).
#define VKGEMM_ACTIVATIONS(X)                                                   \
  X(none, "none")                                                               \
  X(relu, "relu")             /* max(x, 0) */                                   \
  X(leaky_relu, "leaky-relu") /* x >= 0 ? x : slope * x */                      \
  X(gelu_tanh, "gelu-tanh")   /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */ \
  X(gelu_erf, "gelu-erf")     /* 0.5 x (1 + erf(x / sqrt(2))) */                \
  X(silu, "silu")             /* x / (1 + exp(-x)) */                           \
  X(sigmoid, "sigmoid")       /* 1 / (1 + exp(-x)) */                           \
  X(tanh, "tanh")                                                               \
  X(clamp, "clamp")           /* min(max(x, lo), hi) */                         \
  VKGEMM_EXTRA_ACTIVATIONS(X)

// Activations a build adds after the list: none, except in the build that shows an activation added by the
// steps of docs/architecture.md (tests/add_activation/: its entry makes its enumerator as the list's do).
#ifndef VKGEMM_EXTRA_ACTIVATIONS
#define VKGEMM_EXTRA_ACTIVATIONS(X)
#endif

// The bias vector's broadcast (blas.hpp's BiasAxis).
#define VKGEMM_BIAS_AXES(X)    \
  X(none, "none")              \
  X(per_column, "per-column")  \
  X(per_row, "per-row")

// The dequantization scale's broadcast (blas.hpp's ScaleAxis).
#define VKGEMM_SCALE_AXES(X)   \
  X(none, "none")              \
  X(per_tensor, "per-tensor")  \
  X(per_column, "per-column")

// Whether f64 and f32 products may be emulated (options.hpp's Precision).
#define VKGEMM_PRECISIONS(X) \
  X(native, "native")        \
  X(emulated, "emulated")

// How a call waits for the device (options.hpp's WaitMode).
#define VKGEMM_WAIT_MODES(X) \
  X(automatic, "auto")       \
  X(spin, "spin")            \
  X(sleep, "sleep")

// What went wrong (error.hpp's ErrorCode). The C ABI's status is 1 + the number.
#define VKGEMM_ERROR_CODES(X)                                                                               \
  X(invalid_argument, "invalid_argument")     /* a value outside what the call accepts */                  \
  X(dimension_mismatch, "dimension_mismatch") /* the shapes of A, B and C do not form a product */         \
  X(unsupported_type, "unsupported_type")     /* the device lacks what the type needs (shaderFloat64...) */ \
  X(unsupported_config, "unsupported_config") /* a configuration that does not fit the device's limits */  \
  X(too_large, "too_large")         /* past maxStorageBufferRange, an allocation or device memory */        \
  X(out_of_memory, "out_of_memory") /* Vulkan could not allocate host or device memory */                   \
  X(no_loader, "no_loader")         /* no Vulkan loader (libvulkan.so.1) could be loaded */                 \
  X(no_device, "no_device")         /* no Vulkan device with a compute queue */                             \
  X(device_not_found, "device_not_found")             /* the device selector matched nothing */             \
  X(validation_unavailable, "validation_unavailable") /* validation asked for, the layer not installed */   \
  X(device_lost, "device_lost")     /* VK_ERROR_DEVICE_LOST */                                              \
  X(vulkan_error, "vulkan_error")   /* any other failing VkResult */                                        \
  X(file_format, "file_format")     /* a malformed or unsupported input file */                             \
  X(io_error, "io_error")           /* a file could not be read or written */                               \
  /* The reference BLAS's own argument checks (xGEMM), one code each: */                                    \
  X(negative_dimension, "negative_dimension") /* m, n, k or the batch count below zero */                   \
  X(invalid_leading_dimension, "invalid_leading_dimension") /* an ld smaller than what it must hold */      \
  X(invalid_stride, "invalid_stride")     /* a negative batch stride, or C's entries overlapping */         \
  X(buffer_too_small, "buffer_too_small") /* a buffer (and offset) too small for the call's matrices */     \
  X(not_ready, "not_ready") /* a recorded GEMM's results asked for before its submission completed */       \
  X(unsupported_feature, "unsupported_feature") /* the device lacks an optional extension the call needs */

// An enumerator of a list above, as an enum's body takes it.
#define VKGEMM_NAMES_ENUMERATOR(enumerator, spelling) enumerator,

#include <cstdint>
#include <span>
#include <string_view>

namespace vkgemm {

// The spellings of one enumeration, in the order of their numbers: "type", "kernel" (every number from 0 to
// the largest, "auto" among them), "activation", "bias_axis", "scale_axis", "precision", "wait_mode",
// "error". Empty for any other name. The C ABI's vkgemm_enum_name reads them.
std::span<const char* const> enumeration_names(std::string_view enumeration) noexcept;
// The enumerations enumeration_names knows, in the order above.
std::span<const char* const> enumerations() noexcept;

}  // namespace vkgemm
