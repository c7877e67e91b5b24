#include "names.hpp"

#include <algorithm>

namespace vkgemm::cli {

NameTable<Kernel> kernel_table() {
  NameTable<Kernel> out;
  const auto add = [&](Kernel k) {
    const bool listed = std::any_of(out.begin(), out.end(), [&](const auto& e) { return e.second == k; });
    if (!listed) out.emplace_back(std::string(to_string(k)), k);
  };
  for (Kernel k : all_kernels) add(k);
  for (Kernel k : matrix_kernels) add(k);
  add(Kernel::automatic);
  return out;
}

NameTable<DataType> type_table() {
  NameTable<DataType> out;
  for (DataType t : all_data_types) out.emplace_back(std::string(to_string(t)), t);
  return out;
}

NameTable<Layout> layout_table() { return {{"row", Layout::row_major}, {"col", Layout::col_major}}; }

}  // namespace vkgemm::cli
