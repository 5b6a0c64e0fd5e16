// The doctest runner of every test executable. Its implementation is the costliest translation
// unit of the suite (15-30 s per build tree), so it is compiled once, into
// wheelbeat_test_main, instead of once per executable.
//
// ctest runs each TEST_CASE alone through --test-case=NAME (doctest_discover_tests). A filter
// that matches nothing would pass having run nothing (a name with ';' is cut at it by CMake's
// lists, for one), so a run given a --test-case filter that selects no test case fails.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

namespace {

// Counts the test cases that passed the run's filters (doctest's own figure, at the run's end).
class SelectedCount : public doctest::IReporter {
public:
  explicit SelectedCount(const doctest::ContextOptions& /*options*/) {}
  static inline unsigned selected = 0;

  void test_run_end(const doctest::TestRunStats& stats) override {
    selected = stats.numTestCasesPassingFilters;
  }
  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_case_start(const doctest::TestCaseData& /*data*/) override {}
  void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*e*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*data*/) override {}
  void log_message(const doctest::MessageData& /*data*/) override {}
  void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}
};

REGISTER_LISTENER("selected_count", 1, SelectedCount);

bool filtersByName(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--test-case=") || arg.starts_with("-tc=")) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int status = context.run();
  if (context.shouldExit()) return status;
  if (status == 0 && filtersByName(argc, argv) && SelectedCount::selected == 0) {
    std::fprintf(stderr,
                 "test_main: the --test-case filter selected no test case (a test name "
                 "with ';' or a renamed test?)\n");
    return 1;
  }
  return status;
}
