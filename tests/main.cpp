// The test runner: prints the seed and the device, runs doctest, and fails the process if validation
// reported anything at all (inside a test that also fails the test itself). Two rules make a run say what
// it did: a filter (--test-suite, --test-case) that matches no case fails, so a renamed case cannot drop
// out of CI unseen; and a run with a skipped case (test::skip) and no failure exits kSkipExitCode, which
// CTest counts as skipped (SKIP_RETURN_CODE in tests/CMakeLists.txt), never as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "keep_loaded.hpp"
#include "support.hpp"

namespace {

// Remembers how many test cases the filters let through, and the name of the running one.
struct CaseCounter : doctest::IReporter {
  static inline unsigned matched = 0;
  static inline std::string current;
  explicit CaseCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override { matched = stats.numTestCasesPassingFilters; }
  void test_case_start(const doctest::TestCaseData& data) override { current = data.m_name; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("vkgemm-case-counter", 1, CaseCounter);

}  // namespace

std::string vkgemm::test::current_case_name() { return CaseCounter::current; }

int main(int argc, char** argv) {
  vkgemm::cli::keep_libraries_loaded();  // VKGEMM_KEEP_LOADED, for LeakSanitizer
  fmt::print("vkgemm tests: seed {} (VKGEMM_TEST_SEED={} repeats this run)\n", vkgemm::test::run_seed(),
             vkgemm::test::run_seed());
  doctest::Context context(argc, argv);
  const int code = context.run();
  vkgemm::test::release_engine();
  if (context.shouldExit()) return code;
  if (const uint64_t n = vkgemm::test::validation_messages()) {
    fmt::print(stderr, "FAILED: {} validation message(s) were reported\n", n);
    return code ? code : 1;
  }
  if (CaseCounter::matched == 0) {
    fmt::print(stderr, "FAILED: no test case matched the filters (was a case renamed?)\n");
    return 1;
  }
  if (code == 0 && vkgemm::test::skipped_cases() > 0) {
    fmt::print("vkgemm tests: {} case(s) skipped, reported as a skip\n", vkgemm::test::skipped_cases());
    return vkgemm::test::kSkipExitCode;
  }
  return code;
}
