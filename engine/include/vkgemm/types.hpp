// Element types and kernels, with their names as the program and the API spell them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "vkgemm/kernel_list.hpp"
#include "vkgemm/names.hpp"

namespace vkgemm {

// f16: IEEE binary16 in 2-byte storage, for A and B; C is f32 (the default) or f16. See GemmOptions.
// bf16: bfloat16 (the upper half of an f32: 8 exponent bits, 7 mantissa bits) in 2-byte storage, for A and
// B; sums in fp32; C is f32 (the default) or bf16, rounded to nearest even.
// i8, u8: signed and unsigned 8-bit integers, for A and B; C is i32 (two's complement, sums and alpha/beta
// products wrap modulo 2^32, as i32 products do).
enum class DataType { VKGEMM_DATA_TYPES(VKGEMM_NAMES_ENUMERATOR) };

// The kernels: one enumerator per entry of vkgemm/kernel_list.hpp, numbered as the entry says (what each
// kernel is: the list), and automatic ("auto": the best kernel and configuration for the shape, type and
// device), which is no kernel.
enum class Kernel {
#define VKGEMM_KERNEL_ENUMERATOR(name, value) name = (value),
  VKGEMM_KERNELS(VKGEMM_KERNEL_ENUMERATOR)
#undef VKGEMM_KERNEL_ENUMERATOR
  automatic = 3,
};

std::size_t element_size(DataType type) noexcept;
std::string_view to_string(DataType type) noexcept;
std::string_view to_string(Kernel kernel) noexcept;
std::optional<DataType> parse_data_type(std::string_view name) noexcept;
std::optional<Kernel> parse_kernel(std::string_view name) noexcept;

// The type C gets when the caller does not choose: f32 for f16 and bf16 inputs (fp32 accumulation keeps its
// precision), i32 for i8 and u8 inputs, else the input type.
DataType default_output_type(DataType input) noexcept;
// Whether inputs of `input` may give C of `output`: the default output type, or, for f16 and bf16 inputs,
// the input type itself.
bool output_allowed(DataType input, DataType output) noexcept;
// The 16-bit float inputs (f16, bf16), whose products are exact in fp32 and whose sums are fp32.
bool is_half_width_float(DataType type) noexcept;
// The integer types (i32, i8, u8): exact arithmetic, modulo 2^32.
bool is_integer(DataType type) noexcept;

#define VKGEMM_DATA_TYPE_VALUE(enumerator, spelling) DataType::enumerator,
inline constexpr DataType all_data_types[] = {VKGEMM_DATA_TYPES(VKGEMM_DATA_TYPE_VALUE)};
#undef VKGEMM_DATA_TYPE_VALUE
// Every kernel the library has (not `automatic`), as its kernel table lists them: naive, tiled, blocked,
// coopmat, coopmat2. Which of them a device runs, Engine::check_supported says.
std::span<const Kernel> all_kernels() noexcept;
// The SIMT kernels, which run on every device (blocked takes f32 and f64 only; gemv is for skinny products).
inline constexpr Kernel simt_kernels[] = {Kernel::naive, Kernel::tiled, Kernel::blocked, Kernel::gemv};
// The cooperative-matrix kernels: f16 inputs, on devices with the extension (Engine::check_supported says).
inline constexpr Kernel matrix_kernels[] = {Kernel::coopmat, Kernel::coopmat2};

}  // namespace vkgemm
