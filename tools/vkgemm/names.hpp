// Enum-valued options (--type, --kernel, --layout, ...) parsed when the command line is parsed, from the
// engine's own name tables and to_string functions (vkgemm/types.hpp): a kernel or type the engine adds is
// accepted, listed in help and named in errors with no change here.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "vkgemm/blas.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/options.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::cli {

template <class E>
using NameTable = std::vector<std::pair<std::string, E>>;

// Every kernel the engine names (`auto` included), every element type, and the two memory layouts.
NameTable<Kernel> kernel_table();
NameTable<DataType> type_table();
NameTable<Layout> layout_table();
// Every activation of the fused epilogue (vkgemm/names.hpp), `none` first.
NameTable<Activation> activation_table();
// GemmOptions::precision: native, emulated.
NameTable<Precision> precision_table();

template <class E>
std::string joined_names(const NameTable<E>& table) {
  std::string out;
  for (const auto& [name, value] : table) out += (out.empty() ? "" : ", ") + name;
  return out;
}

template <class E>
std::string name_of(const NameTable<E>& table, E value) {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  return "?";
}

// An option whose value is one of `table`'s names, stored as its enum (or std::optional of it) as the
// command line is parsed. An unknown name ends parsing with vkgemm::Error(invalid_argument)
// "FLAG NAME is unknown (the names)".
template <class T, class E>
CLI::Option* add_enum_option(CLI::App& cmd, const std::string& flag, T& value, const NameTable<E>& table,
                             const std::string& help) {
  const auto set = [&value, table, flag](const std::string& text) {
    for (const auto& [name, v] : table) {
      if (name == text) {
        value = v;
        return;
      }
    }
    throw Error(ErrorCode::invalid_argument, fmt::format("{} {} is unknown ({})", flag, text, joined_names(table)));
  };
  return cmd.add_option_function<std::string>(flag, set, help)->type_name("NAME");
}

}  // namespace vkgemm::cli
