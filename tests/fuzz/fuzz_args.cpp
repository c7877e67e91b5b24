// libFuzzer target for the program's argument parser (vkgemm::cli::parse_command_line): the input is split
// at newlines into arguments. Parsing must end in a command to run, an exit code with its message, or a
// vkgemm::Error; it never opens a device (the command is not run), and nothing else may escape.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "vkgemm/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args{"vkgemm"};
  std::string current;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    const auto line = vkgemm::cli::parse_command_line(static_cast<int>(argv.size()), argv.data());
    if (line.exit_code) {
      if (*line.exit_code != 0 && *line.exit_code != 2) __builtin_trap();
      if (*line.exit_code == 2 && line.err.empty()) __builtin_trap();  // a usage error must say something
    } else if (!line.run) {
      __builtin_trap();
    }
  } catch (const vkgemm::Error& e) {
    if (e.code() != vkgemm::ErrorCode::invalid_argument) __builtin_trap();
  }
  return 0;
}
