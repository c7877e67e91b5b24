#include "names.hpp"

#include "vkgemm/names.hpp"

#include <algorithm>

namespace vkgemm::cli {

NameTable<Kernel> kernel_table() {
  NameTable<Kernel> out;
  for (Kernel k : all_kernels()) out.emplace_back(std::string(to_string(k)), k);
  out.emplace_back(std::string(to_string(Kernel::automatic)), Kernel::automatic);
  return out;
}

NameTable<DataType> type_table() {
  NameTable<DataType> out;
  for (DataType t : all_data_types) out.emplace_back(std::string(to_string(t)), t);
  return out;
}

NameTable<Activation> activation_table() {
  NameTable<Activation> out;
  for (const char* name : enumeration_names("activation")) out.emplace_back(name, *parse_activation(name));
  return out;
}

NameTable<Layout> layout_table() { return {{"row", Layout::row_major}, {"col", Layout::col_major}}; }

NameTable<Precision> precision_table() {
  NameTable<Precision> out;
  for (Precision p : all_precisions) out.emplace_back(std::string(to_string(p)), p);
  return out;
}

}  // namespace vkgemm::cli
