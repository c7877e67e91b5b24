// The vkgemm program's command line, parsed and checked without opening a device or reading a file, so
// that main() and the argument-parser fuzzer (tests/fuzz/fuzz_args.cpp) run the same code.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace vkgemm::cli {

struct CommandLine {
  // Set when parsing alone ends the program: 0 for --help or --version, 2 for a usage error.
  std::optional<int> exit_code;
  std::string out;  // what to print on stdout then (help, version)
  std::string err;  // what to print on stderr then (the usage error)
  // Otherwise the chosen command, its option values already checked; it opens the device when called.
  std::function<int()> run;
};

// Throws vkgemm::Error when an option value is out of range or options conflict.
CommandLine parse_command_line(int argc, const char* const* argv);

// What --version prints: the version and the commit the binary was built from (build_commit, with -dirty),
// the same commit every result file it writes carries.
std::string version_line();

}  // namespace vkgemm::cli
