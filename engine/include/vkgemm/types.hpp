// Element types and kernels, with their names as the program and the API spell them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace vkgemm {

enum class DataType { f32, i32, f64 };

enum class Kernel {
  naive,      // one invocation per element of C
  tiled,      // square shared-memory tiles, the walkthroughs' kernel; the tile size is chosen at run time
  blocked,    // register-blocked, vectorized, double-buffered; configured by BlockedConfig
  automatic,  // "auto": the best kernel and configuration for the shape and device
};

std::size_t element_size(DataType type) noexcept;
std::string_view to_string(DataType type) noexcept;
std::string_view to_string(Kernel kernel) noexcept;
std::optional<DataType> parse_data_type(std::string_view name) noexcept;
std::optional<Kernel> parse_kernel(std::string_view name) noexcept;

inline constexpr DataType all_data_types[] = {DataType::f32, DataType::i32, DataType::f64};
// The concrete kernels (auto picks one of them).
inline constexpr Kernel all_kernels[] = {Kernel::naive, Kernel::tiled, Kernel::blocked};

}  // namespace vkgemm
