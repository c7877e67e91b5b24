// The test runner: prints the seed and the device, runs doctest, and fails the process if validation
// reported anything at all (inside a test that also fails the test itself).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "keep_loaded.hpp"
#include "support.hpp"

int main(int argc, char** argv) {
  vkgemm::cli::keep_libraries_loaded();  // VKGEMM_KEEP_LOADED, for LeakSanitizer
  fmt::print("vkgemm tests: seed {} (VKGEMM_TEST_SEED={} repeats this run)\n", vkgemm::test::run_seed(),
             vkgemm::test::run_seed());
  doctest::Context context(argc, argv);
  const int code = context.run();
  if (context.shouldExit()) return code;
  if (const uint64_t n = vkgemm::test::validation_messages()) {
    fmt::print(stderr, "FAILED: {} validation message(s) were reported\n", n);
    return code ? code : 1;
  }
  return code;
}
