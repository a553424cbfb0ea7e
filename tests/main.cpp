// The doctest main, compiled once and shared by every test executable.
//
// A run filtered by --test-case (CTest runs each case so) that starts no test case fails:
// a name CTest cut apart (it splits names at ';') or a filter that drifted from its case would
// otherwise pass without running anything.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

namespace {

int started = 0;  // test cases begun in this run

// Counts the test cases that start; reports nothing itself.
struct start_counter : doctest::IReporter {
    explicit start_counter(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData&) override { ++started; }
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("start_counter", 1, start_counter);

}  // namespace

int main(int argc, char** argv) {
    doctest::Context context(argc, argv);
    const int status = context.run();
    if (context.shouldExit()) return status;  // --list-test-cases, --help, …
    bool filtered = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        filtered = filtered || arg.rfind("--test-case=", 0) == 0 || arg.rfind("-tc=", 0) == 0;
    }
    if (status == 0 && filtered && started == 0) {
        std::fprintf(stderr,
                     "tests: no test case matches the --test-case filter: nothing ran (a name "
                     "CTest cut at a ';'?)\n");
        return 1;
    }
    return status;
}
