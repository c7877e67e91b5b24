// Element types and kernels, with their names as the program and the API spell them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace vkgemm {

enum class DataType { f32, i32, f64 };

enum class Kernel {
  naive,  // one invocation per element of C
  tiled,  // square shared-memory tiles, the walkthroughs' kernel; the tile size is chosen at run time
  // "auto": the first configuration this device (as created) and type can run: tiled at the given tile,
  // then tiled 16, 8, 4, then naive 16, 8, 1. When none can, the first refusal is thrown (it names the
  // missing feature or limit).
  automatic,
};

std::size_t element_size(DataType type) noexcept;
std::string_view to_string(DataType type) noexcept;
std::string_view to_string(Kernel kernel) noexcept;
std::optional<DataType> parse_data_type(std::string_view name) noexcept;
std::optional<Kernel> parse_kernel(std::string_view name) noexcept;

inline constexpr DataType all_data_types[] = {DataType::f32, DataType::i32, DataType::f64};
// The concrete kernels (automatic picks one of them).
inline constexpr Kernel all_kernels[] = {Kernel::naive, Kernel::tiled};

}  // namespace vkgemm
