// The vkgemm program: devices, demo, run, tune, bench, peak. Results on stdout, errors on stderr.
// Exit codes: 0 success, 1 a failed check, 2 an error, 3 validation messages.
#include <fmt/format.h>

#include "command_line.hpp"
#include "keep_loaded.hpp"
#include "vkgemm/vkgemm.hpp"

int main(int argc, char** argv) {
  using namespace vkgemm;
  cli::keep_libraries_loaded();  // VKGEMM_KEEP_LOADED, for LeakSanitizer
  try {
    const cli::CommandLine line = cli::parse_command_line(argc, argv);
    if (line.exit_code) {
      fmt::print("{}", line.out);
      fmt::print(stderr, "{}", line.err);
      return *line.exit_code;
    }
    return line.run();
  } catch (const Error& e) {
    fmt::print(stderr, "vkgemm: error ({}): {}\n", to_string(e.code()), e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "vkgemm: error: {}\n", e.what());
    return 2;
  }
}
