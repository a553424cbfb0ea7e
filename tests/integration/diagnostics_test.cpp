// When an action fails, the failure says why (docs/SDK.md, "When an action fails"), through
// the real proxy: an out-of-memory kill is named with the cgroup's limit (a fake cgroup
// directory, OW_CGROUP_DIR: the machine's own cgroups are never touched), and the restart
// logs the ended process's peak RSS; a C++ action's crash prints a backtrace naming its
// functions into that activation's log (file:line with -g), a bad_alloc is the activation's
// error and the process serves on; the context carries the trace (transaction_id,
// traceparent). The C++ cases share one compiled action (tests/fixtures/cpp/diagnostics.cpp).
#include <doctest/doctest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::seconds;

namespace {

// A #! action that echoes `value`; {"oom_now":…} bumps the fake cgroup's oom_kill count
// (as the kernel's OOM killer does) and SIGKILLs itself, {"plain_kill":…} only SIGKILLs
// itself (someone else's kill: not an OOM).
std::string oom_script(const std::string& cgroup) {
    return "#!/bin/bash\n"
           "while read line; do\n"
           "  case \"$line\" in\n"
           "    *oom_now*)\n"
           "      n=$(sed -n 's/^oom_kill //p' '" +
           cgroup +
           "/memory.events')\n"
           "      printf 'oom %d\\noom_kill %d\\n' $((n + 1)) $((n + 1)) > '" +
           cgroup +
           "/memory.events'\n"
           "      kill -9 $$ ;;\n"
           "    *plain_kill*) kill -9 $$ ;;\n"
           "  esac\n"
           "  echo '{\"served\":true}' >&3\n"
           "done\n";
}

// The stderr lines of activation `n` (from 1): what precedes its sentinel, after the one
// before it.
std::string activation_err(const proxy_process& proxy, int n) {
    const std::string err = proxy.stderr_text();
    size_t from = 0;
    for (int i = 1; i < n; ++i) {
        from = err.find(SENTINEL, from);
        if (from == std::string::npos) return {};
        from += std::string(SENTINEL).size();
    }
    const size_t to = err.find(SENTINEL, from);
    return err.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

bool has_sentinels(const proxy_process& proxy, size_t n) {
    return wait_until([&] { return sentinel_count(proxy.stderr_text()) >= n; }, seconds(10));
}

const std::string TRACEPARENT = "^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$";

}  // namespace

TEST_CASE("diagnostics: an OOM kill the cgroup counts is named with its limit, then served") {
    temp_dir cgroup("fake-cgroup");
    write_file(cgroup.path() / "memory.events", "low 0\nhigh 0\nmax 3\noom 0\noom_kill 0\n");
    write_file(cgroup.path() / "memory.max", "268435456\n");
    proxy_process proxy(with_env({{"OW_CGROUP_DIR", cgroup.path().string()}}));
    REQUIRE(proxy.init(oom_script(cgroup.path().string())).status == 200);
    CHECK_REPLY(proxy.run(json{{"warm", 1}}), 200, "{\"served\":true}\n");

    CHECK_ERROR_REPLY(proxy.run(json{{"oom_now", 1}}), 400,
                      "command exited (the action exceeded its memory limit (256 MB))");
    CHECK(wait_until(
        [&] {
            return contains(proxy.stderr_text(),
                            "the action exited during the activation (killed by signal 9 "
                            "(SIGKILL): the action exceeded its memory limit (256 MB))");
        },
        seconds(5)));
    CHECK_REPLY(proxy.run(json{{"after", "oom"}}), 200, "{\"served\":true}\n");
    CHECK(contains(proxy.stderr_text(), "; starting it again (its peak RSS: "));

    // A SIGKILL while the count stays: a plain crash, as before.
    CHECK_ERROR_REPLY(proxy.run(json{{"plain_kill", 1}}), 400,
                      "command exited (killed by signal 9, SIGKILL)");
    CHECK_REPLY(proxy.run(json{{"after", "kill"}}), 200, "{\"served\":true}\n");

    // Without a limit (memory.max "max"), the kill is still named.
    write_file(cgroup.path() / "memory.max", "max\n");
    CHECK_ERROR_REPLY(proxy.run(json{{"oom_now", 2}}), 400,
                      "command exited (the action exceeded its memory limit)");
    CHECK_REPLY(proxy.run(json{{"after", "oom"}}), 200, "{\"served\":true}\n");
}

TEST_CASE("diagnostics: a C++ crash logs a backtrace naming its functions, then is served") {
    proxy_process proxy(cpp_runtime());
#ifdef ACTIONLOOP_TEST_SANITIZED
    // The sanitizer builds compile actions with -fsanitize=undefined too, whose own report
    // would stop the null dereference and the division by zero before the launcher's: the
    // action's code is built without those two checks (the launcher keeps them).
    const json env = {{"ACTIONLOOP_CXXFLAGS", "-fno-sanitize=null,integer-divide-by-zero"}};
    REQUIRE(proxy.init(fixture_text("cpp/diagnostics.cpp"), "main", &env).status == 200);
#else
    REQUIRE(proxy.init(fixture_text("cpp/diagnostics.cpp")).status == 200);
#endif
    const std::vector<pid_t> first = proxy.children();

    // A null dereference, abort(), a throw from a destructor: each crash's backtrace (the
    // action's own functions, by name) is in its own activation's log, before its sentinel.
    struct crash {
        const char* fail;
        const char* answer;
        std::vector<const char*> said;
    };
    const crash crashes[] = {
        {"null",
         "command exited (killed by signal 11, SIGSEGV)",
         {"actionloop: the action crashed: SIGSEGV (invalid memory access) at address 0x0",
          "backtrace (most recent call first):\n  #0 shop::read_price (0x", "  #1 main (0x",
          "(the launcher's activation loop)"}},
        {"abort",
         "command exited (killed by signal 6, SIGABRT)",
         {"actionloop: the action crashed: SIGABRT (abort)", " shop::check_stock (0x",
          " main (0x"}},
        {"destructor",
         "command exited (killed by signal 6, SIGABRT)",
         {"actionloop: an exception escaped (std::terminate): std::runtime_error: the printer "
          "jammed",
          "actionloop: the action crashed: SIGABRT (abort)", " shop::print_receipt (0x"}},
        {"divide",
         "command exited (killed by signal 8, SIGFPE)",
         {"actionloop: the action crashed: SIGFPE (arithmetic error, e.g. an integer division "
          "by zero)",
          "  #0 shop::split_bill (0x"}},
        {"threads",
         "command exited (killed by signal 11, SIGSEGV)",
         {"actionloop: the action crashed: SIGSEGV (invalid memory access) at address 0x0",
          "  #0 shop::restock_worker (0x"}},
    };
    int activation = 0;
    for (const crash& c : crashes) {
        INFO("fail: " << c.fail);
        CHECK_ERROR_REPLY(proxy.run(json{{"fail", c.fail}}), 400, c.answer);
        REQUIRE(has_sentinels(proxy, ++activation));
        const std::string err = activation_err(proxy, activation);
        for (const char* said : c.said) CHECK_MESSAGE(contains(err, said), err);
        CHECK_MESSAGE(count_occurrences(err, "actionloop: the action crashed") == 1, err);
        // The next /run is served (by a new process).
        CHECK_REPLY(proxy.run(json{{"after", c.fail}}), 200,
                    "{\"traceparent\":\"\",\"transaction_id\":\"\"}\n");
        REQUIRE(has_sentinels(proxy, ++activation));
    }
    CHECK(proxy.children() != first);

    // A bad_alloc under a real RLIMIT_AS: the activation's error, the same process serves on.
#ifdef ACTIONLOOP_TEST_SANITIZED
    MESSAGE("bad_alloc case not run: the sanitizers' allocator does not run under RLIMIT_AS");
#else
    const std::vector<pid_t> serving = proxy.children();
    CHECK_REPLY(proxy.run(json{{"fail", "memory"}}), 200,
                "{\"error\":\"out of memory: the action could not allocate memory "
                "(std::bad_alloc)\"}\n");
    REQUIRE(has_sentinels(proxy, ++activation));
    CHECK(contains(activation_err(proxy, activation),
                   "action error: out of memory: the action could not allocate memory"));
    CHECK_REPLY(proxy.run(json{{"after", "memory"}}), 200,
                "{\"traceparent\":\"\",\"transaction_id\":\"\"}\n");
    CHECK(proxy.children() == serving);
#endif

    // The trace context: the transaction id, and a traceparent derived from it (stable) or
    // taken from a web request's traceparent header (its trace-id and flags).
    const std::string activation_id = "0123456789abcdef0123456789abcdef";
    const json with_tid = {{"transaction_id", "tid-42"}, {"activation_id", activation_id}};
    const json derived = json_of(proxy.run(json::object(), with_tid));
    CHECK(derived["transaction_id"] == "tid-42");
    const std::string traceparent = derived["traceparent"].get<std::string>();
    CHECK_MESSAGE(std::regex_match(traceparent, std::regex(TRACEPARENT)), traceparent);
    CHECK(traceparent.substr(35) == "-0123456789abcdef-01");
    CHECK(json_of(proxy.run(json{{"x", 1}}, with_tid))["traceparent"] == traceparent);
    const json other = json_of(proxy.run(json::object(), {{"transaction_id", "tid-43"}}));
    CHECK(other["traceparent"].get<std::string>().substr(0, 35) != traceparent.substr(0, 35));
    const std::string header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    const json web = {{"__ow_headers", {{"traceparent", header}}}};
    CHECK(json_of(proxy.run(web, with_tid))["traceparent"] ==
          "00-4bf92f3577b34da6a3ce929d0e0e4736-0123456789abcdef-00");
    const json bad_header = {{"__ow_headers", {{"traceparent", "00-zz-00f067aa0ba902b7-01"}}}};
    CHECK(json_of(proxy.run(bad_header, with_tid))["traceparent"] == traceparent);
}

TEST_CASE("diagnostics: a C++ action built with -g says file:line in its backtrace") {
    proxy_process proxy(cpp_runtime());
    const json env = {{"ACTIONLOOP_CXXFLAGS", "-g"}};
    REQUIRE(proxy.init(fixture_text("cpp/diagnostics.cpp"), "main", &env).status == 200);
    CHECK_ERROR_REPLY(proxy.run(json{{"fail", "null"}}), 400,
                      "command exited (killed by signal 11, SIGSEGV)");
    REQUIRE(has_sentinels(proxy, 1));
    const std::string err = activation_err(proxy, 1);
    // A single uploaded file is `action.cpp`, as in compile errors (issue 41 item 9);
    // read_price dereferences on line 14, main calls it on 59.
    CHECK_MESSAGE(contains(err, "  #0 shop::read_price at action.cpp:14 (0x"), err);
    CHECK_MESSAGE(contains(err, "  #1 main at action.cpp:59 (0x"), err);
    CHECK_REPLY(proxy.run(json{{"after", "crash"}}), 200,
                "{\"traceparent\":\"\",\"transaction_id\":\"\"}\n");
}

namespace {

// The fenced blocks of docs/SDK.md, in order, each without its fences.
std::vector<std::string> sdk_blocks() {
    std::istringstream doc(read_file(fs::path(ACTIONLOOP_SOURCE_DIR) / "docs/SDK.md"));
    std::vector<std::string> blocks;
    bool inside = false;
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("```", 0) == 0) {
            inside = !inside;
            if (inside) blocks.emplace_back();
        } else if (inside) {
            blocks.back() += line + "\n";
        }
    }
    return blocks;
}

// Whether `err` holds the doc's `report` line after line, each "0x…" standing for an address.
bool shows(const std::string& err, const std::string& report) {
    std::string pattern;
    for (const char c : report) {
        if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) pattern += '\\';
        pattern += c;
    }
    pattern = std::regex_replace(pattern, std::regex("0x…"), "0x[0-9a-f]+");
    return std::regex_search(err, std::regex(pattern));
}

}  // namespace

// Issue 41 item 9: the docs' crash example, as the docs show it: shop.cpp at the default flags
// (read_price inlined into main: not in the report) and with -g (inlined frames too, with
// file:line, the single uploaded file named action.cpp as in compile errors).
TEST_CASE("diagnostics: docs/SDK.md's crash example prints the reports the docs show") {
    std::string source;
    std::vector<std::string> reports;
    for (const std::string& block : sdk_blocks()) {
        if (block.rfind("// shop.cpp\n", 0) == 0) source = block;
        if (block.rfind("actionloop: the action crashed: SIGSEGV", 0) == 0)
            reports.push_back(block);
    }
    REQUIRE_MESSAGE(!source.empty(), "no // shop.cpp block in docs/SDK.md");
    REQUIRE(reports.size() == 2);
    const json flags[] = {json::object(), {{"ACTIONLOOP_CXXFLAGS", "-g"}}};
    for (size_t i = 0; i < 2; ++i) {
        INFO("env: " << flags[i].dump());
        proxy_process proxy(cpp_runtime());
        REQUIRE(proxy.init(source, "main", &flags[i]).status == 200);
        CHECK_REPLY(proxy.run(json{{"item", "apple"}}), 200, "{\"price\":120}\n");
        CHECK_ERROR_REPLY(proxy.run(json{{"item", "pear"}}), 400,
                          "command exited (killed by signal 11, SIGSEGV)");
        REQUIRE(has_sentinels(proxy, 2));
        const std::string err = activation_err(proxy, 2);
        CHECK_MESSAGE(shows(err, reports[i]), "the doc:\n" << reports[i] << "the log:\n" << err);
    }
}

// __FILE__ (an assert's message) names the files as compile errors and -g backtraces do: a
// single uploaded file is action.cpp, a zip's sources their paths in the zip.
TEST_CASE("diagnostics: __FILE__ is action.cpp for a single file, the zip's path otherwise") {
    const std::string source =
        "nlohmann::json main(nlohmann::json) { return {{\"file\", __FILE__}}; }\n";
    proxy_process single(cpp_runtime());
    REQUIRE(single.init(source).status == 200);
    CHECK_REPLY(single.run(json::object()), 200, "{\"file\":\"action.cpp\"}\n");
    proxy_process zipped(cpp_runtime());
    REQUIRE(zipped.init(base64_encode(make_zip({file_entry("shop/main.cpp", source)}))).status ==
            200);
    CHECK_REPLY(zipped.run(json::object()), 200, "{\"file\":\"shop/main.cpp\"}\n");
}

TEST_CASE("diagnostics: a raw entry point gets the same trace context") {
    proxy_process proxy(cpp_runtime());
    REQUIRE(proxy.init(fixture_text("cpp/trace_raw.cpp")).status == 200);
    const json ids = {{"transaction_id", "tid-42"},
                      {"activation_id", "0123456789abcdef0123456789abcdef"}};
    const json derived = json_of(proxy.run(json::object(), ids));
    CHECK(derived["transaction_id"] == "tid-42");
    const std::string traceparent = derived["traceparent"].get<std::string>();
    CHECK_MESSAGE(std::regex_match(traceparent, std::regex(TRACEPARENT)), traceparent);
    CHECK(traceparent.substr(35) == "-0123456789abcdef-01");
    const json web = {
        {"__ow_headers",
         {{"accept", "*/*"},
          {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}};
    CHECK(json_of(proxy.run(web, ids))["traceparent"] ==
          "00-4bf92f3577b34da6a3ce929d0e0e4736-0123456789abcdef-01");
    CHECK(json_of(proxy.run(json{{"x", 1}}))["traceparent"] == "");  // nothing to carry
}
