// C++ actions end to end: sources sent to /init are built by the real `compile` (OW_COMPILER)
// and linked with the launcher, then run through the proxy (with the ack, as in the image).
// Each case compiles real C++, so there are few of them and each covers one promise of the
// action contract (protocol.md "The C++ action contract").
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "process_tools.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

std::string cpp_source(const std::string& name) { return fixture_text("cpp/" + name); }

// tests/fixtures/cpp/hooks.cpp, compiled once (`proxy -compile`) for the hooks' cases, as
// base64 for /init.
const std::string& hooks_zip() {
    static const std::string zip = [] {
        temp_dir cwd;
        env_map env = path_only_env();
        env["OW_COMPILER"] = compiler_script().string();
        const command_result compiled = run_command({ACTIONLOOP_PROXY_BIN, "-compile", "main"},
                                                    cpp_source("hooks.cpp"), env, cwd.path());
        REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
        return base64_encode(compiled.out);
    }();
    return zip;
}

// Where `needle` is in `text`; REQUIREs it is there.
size_t position_of(const std::string& text, const std::string& needle) {
    const size_t at = text.find(needle);
    REQUIRE_MESSAGE(at != std::string::npos, "no '" << needle << "' in:\n" << text);
    return at;
}

}  // namespace

TEST_CASE("cpp: a plain action compiles, initializes and greets") {
    proxy_process proxy(cpp_runtime());
    CHECK_REPLY(proxy.init(cpp_source("hello.cpp")), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"name", "Mike"}}), 200, "{\"greeting\":\"Hello, Mike!\"}\n");
    const stream_texts streams = proxy.check_streams(1);
    CHECK(streams.out == "name=Mike");
    CHECK(streams.err.empty());
}

TEST_CASE("cpp: a const-reference entry point takes and returns arrays") {
    proxy_process proxy(cpp_runtime());
    CHECK_REPLY(proxy.init(cpp_source("cref_array.cpp")), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json::array({"x", "y", "z"})), 200, "[\"z\",\"y\",\"x\"]\n");
    CHECK_REPLY(proxy.run(json::object()), 200, "[\"a\",\"b\"]\n");
}

TEST_CASE("cpp: an entry point that is not called main") {
    proxy_process proxy(cpp_runtime());
    CHECK_REPLY(proxy.init(cpp_source("named.cpp"), "hello"), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"name", "Demo"}}), 200, "{\"hello\":\"Demo\"}\n");
}

TEST_CASE("cpp: an exception is an application error, the process and its globals live on") {
    proxy_process proxy(cpp_runtime());
    CHECK_REPLY(proxy.init(cpp_source("stateful.cpp")), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json::object()), 200, "{\"count\":1}\n");
    const std::vector<pid_t> before = proxy.children();
    const http_reply failed = proxy.run(json{{"fail", "boom: no luck"}});
    CHECK(failed.status == 200);
    CHECK(json_of(failed) == json{{"error", "boom: no luck"}});
    CHECK_REPLY(proxy.run(json::object()), 200, "{\"count\":3}\n");
    CHECK(proxy.children() == before);
    const stream_texts streams = proxy.check_streams(3);
    CHECK(contains(streams.err, "boom: no luck"));
}

TEST_CASE("cpp: a zip with several files in folders") {
    proxy_process proxy(cpp_runtime());
    const std::string zip = make_zip(entries_from_dir(fixture_path("cpp/multi").string()));
    CHECK_REPLY(proxy.init(base64_encode(zip)), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"name", "Mike"}}), 200, "{\"greeting\":\"Greetings, Mike!\"}\n");
}

TEST_CASE("cpp: the SDK header gives the activation context") {
    proxy_process proxy(cpp_runtime());
    CHECK_REPLY(proxy.init(cpp_source("context.cpp")), 200, OK_BODY);
    const json extra = {{"activation_id", "abc"}, {"action_name", "/guest/ctx"}};
    const http_reply reply = proxy.run(json::object(), extra);
    CHECK(reply.status == 200);
    CHECK(json_of(reply) == json{{"activation_id", "abc"}, {"action_name", "/guest/ctx"}});
}

TEST_CASE("cpp: main can take the context as a value, built from each request") {
    proxy_process proxy(cpp_runtime());
    CHECK_REPLY(proxy.init(cpp_source("context_value.cpp")), 200, OK_BODY);
    const auto in_a_minute = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch() + std::chrono::minutes(1));
    const json first = {{"activation_id", "a1"},
                        {"action_name", "/guest/ctx"},
                        {"namespace", "guest"},
                        {"deadline", std::to_string(in_a_minute.count())}};
    http_reply reply = proxy.run(json::object(), first);
    CHECK(reply.status == 200);
    CHECK(json_of(reply) == json{{"activation_id", "a1"},
                                 {"action_name", "/guest/ctx"},
                                 {"namespace", "guest"},
                                 {"has_deadline", true},
                                 {"left_positive", true},
                                 {"default_constructed", "a1"},
                                 {"env", "a1"}});
    // The next activation has no name, and its environment variable is gone: the context
    // holds this request's fields only and does not read the environment. Without a deadline
    // its deadline is the proxy's bound, OW_RUN_TIMEOUT_MS (time_left_test.cpp).
    reply = proxy.run(json{{"clear_env", true}}, json{{"activation_id", "a2"}});
    CHECK(reply.status == 200);
    CHECK(json_of(reply) == json{{"activation_id", "a2"},
                                 {"action_name", ""},
                                 {"namespace", ""},
                                 {"has_deadline", true},
                                 {"left_positive", true},
                                 {"default_constructed", "a2"},
                                 {"env", ""}});
    // A deadline past what the clock can hold is no time (not an overflow): the proxy's
    // OW_RUN_TIMEOUT_MS is the deadline.
    reply =
        proxy.run(json::object(), json{{"activation_id", "a3"}, {"deadline", "99999999999999"}});
    CHECK(reply.status == 200);
    CHECK(json_of(reply).value("has_deadline", false) == true);
    CHECK(json_of(reply).value("left_positive", false) == true);
}

TEST_CASE("cpp: a compile error is 502 with the compiler's diagnostic") {
    proxy_process proxy(cpp_runtime());
    const http_reply reply = proxy.init(cpp_source("broken.cpp"));
    CHECK(reply.status == 502);
    const std::string error = json_of(reply).value("error", "");
    CHECK(contains(error, "error:"));
    CHECK(contains(error, "no_such_member_function"));
    proxy.check_streams(0);
}

TEST_CASE("cpp: with OW_LOG_INIT_ERROR the diagnostic goes to stderr, the body is generic") {
    proxy_process proxy(cpp_runtime({{"OW_LOG_INIT_ERROR", "1"}}));
    CHECK_ERROR_REPLY(proxy.init(cpp_source("broken.cpp")), 502,
                      "The action failed to generate or locate a binary. See logs for details.");
    const stream_texts streams = proxy.check_streams(1);
    CHECK(contains(streams.err, "error:"));
    CHECK(contains(streams.err, "no_such_member_function"));
}

TEST_CASE("cpp: proxy -compile output initializes a proxy without a compiler") {
    temp_dir cwd;
    env_map env = path_only_env();
    env["OW_COMPILER"] = compiler_script().string();
    const command_result compiled = run_command({ACTIONLOOP_PROXY_BIN, "-compile", "main"},
                                                cpp_source("hello.cpp"), env, cwd.path());
    REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
    REQUIRE(compiled.out.rfind("PK", 0) == 0);

    proxy_process proxy;
    CHECK_REPLY(proxy.init(base64_encode(compiled.out)), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"name", "Zip"}}), 200, "{\"greeting\":\"Hello, Zip!\"}\n");
}

// Issue 19 item 25: a line the action leaves open on std::cout or std::cerr is ended before
// the sentinels, pipelined (the launcher writes them) or not (the proxy does); a line that
// ended is not ended twice.
TEST_CASE("cpp: an unterminated log line is ended before the activation's sentinels") {
    for (const std::string pipeline : {"1", "0"}) {
        INFO("OW_PIPELINE=" << pipeline);
        proxy_process proxy(cpp_runtime({{"OW_PIPELINE", pipeline}}));
        REQUIRE(proxy.init(cpp_source("open_lines.cpp")).status == 200);
        CHECK_REPLY(proxy.run(json{{"n", 1}}), 200, "{\"n\":1}\n");
        CHECK_REPLY(proxy.run(json{{"n", 2}, {"newline", true}}), 200, "{\"n\":2}\n");
        CHECK_REPLY(proxy.run(json{{"n", 3}}), 200, "{\"n\":3}\n");
        proxy.check_streams(3);
        const std::string end = std::string(SENTINEL) + "\n";
        CHECK(proxy.stdout_text() == "out 1\n" + end + "out 2\n" + end + "out 3\n" + end);
        CHECK(proxy.stderr_text() ==
              "err 1 and clog\n" + end + "err 2\n" + end + "err 3 and clog\n" + end);
    }
}

// The entry point is handed to the launcher by a wrapper around the file that defines it
// (actionloop/entry.hpp), not by a macro renaming the word: every other use of the name, in
// the action and in the standard headers, is left as written.
TEST_CASE("cpp: an entry point named like a library function (count, parse, apply)") {
    struct named_case {
        const char* main;
        std::string code;
        json expected;
    };
    const std::vector<named_case> cases = {
        {"count",
         "#include <algorithm>\n#include <vector>\n"
         "nlohmann::json count(nlohmann::json args) {\n"
         "    std::vector<int> v = args.at(\"v\");\n"
         "    return {{\"twos\", std::count(v.begin(), v.end(), 2)}};\n}\n",
         json{{"twos", 2}}},
        {"parse",
         "nlohmann::json parse(const nlohmann::json& args) {\n"
         "    return nlohmann::json::parse(args.at(\"text\").get<std::string>());\n}\n",
         json{{"parsed", true}}},
        {"apply",
         "#include <future>\n#include <regex>\n#include <tuple>\n"
         "nlohmann::json apply(nlohmann::json args, const actionloop::context&) {\n"
         "    auto sum = std::async(std::launch::async, [] {\n"
         "        return std::apply([](int a, int b) { return a + b; }, std::make_tuple(2, 3));\n"
         "    });\n"
         "    const std::regex word(\"[a-z]+\");\n"
         "    const std::string text = args.value(\"text\", std::string());\n"
         "    return {{\"sum\", sum.get()}, {\"word\", std::regex_match(text, word)}};\n}\n",
         json{{"sum", 5}, {"word", true}}},
    };
    const std::vector<json> inputs = {json{{"v", {1, 2, 2, 3}}},
                                      json{{"text", "{\"parsed\": true}"}}, json{{"text", "abc"}}};
    for (std::size_t i = 0; i < cases.size(); ++i) {
        INFO("entry point " << cases[i].main);
        proxy_process proxy(cpp_runtime());
        CHECK_REPLY(proxy.init(cases[i].code, cases[i].main), 200, OK_BODY);
        const http_reply reply = proxy.run(inputs[i]);
        CHECK(reply.status == 200);
        CHECK(json_of(reply) == cases[i].expected);
    }
}

TEST_CASE("cpp: a wrong entry-point signature fails /init, naming the accepted ones") {
    const std::string accepted =
        "the entry point 'main' must be one of\n"
        "  nlohmann::json main(nlohmann::json args)\n"
        "  nlohmann::json main(const nlohmann::json& args)\n"
        "  nlohmann::json main(nlohmann::json args, const actionloop::context& ctx)\n"
        "  nlohmann::json main(const nlohmann::json& args, const actionloop::context& ctx)\n"
        "  void main(std::string_view value, std::string& answer)\n"
        "  void main(std::string_view value, std::string& answer, const actionloop::context& "
        "ctx)\n"
        "(the return type exactly nlohmann::json, or void for the raw entry point)\n";
    for (const std::string code :
         {"std::string main(nlohmann::json args) { return args.dump(); }\n",
          "int main(nlohmann::json) { return 0; }\n",
          "int main(int argc, char** argv) { return argc + (argv == nullptr); }\n"}) {
        INFO("code: " << code);
        proxy_process proxy(cpp_runtime());
        CHECK_ERROR_REPLY(proxy.init(code), 502, "action.cpp: error: " + accepted);
        CHECK_ERROR_REPLY(proxy.run(json::object()), 500, "no action defined yet");
    }
    // A parameter list of another shape: no accepted overload in the file that defines it.
    {
        proxy_process proxy(cpp_runtime());
        CHECK_ERROR_REPLY(
            proxy.init("nlohmann::json handler(nlohmann::json args, int) { return args; }\n",
                       "handler"),
            502,
            "action.cpp: error: no function 'handler' of an accepted signature is declared in "
            "this file; " +
                replace_all(accepted, "main", "handler"));
    }
    // In a zip, the message names the file that defines it.
    proxy_process proxy(cpp_runtime());
    const std::string zip = make_zip({
        file_entry("src/handler.cpp", "nlohmann::json helper();\n"
                                      "std::string handler(nlohmann::json) { return \"\"; }\n"),
        file_entry("src/helper.cpp", "nlohmann::json helper() { return {}; }\n"),
    });
    const http_reply reply = proxy.init(base64_encode(zip), "handler");
    CHECK(reply.status == 502);
    const std::string error = json_of(reply).value("error", "");
    CHECK(error.rfind("src/handler.cpp: error: the entry point 'handler' must be one of\n", 0) ==
          0);
    CHECK(contains(error, "  void handler(std::string_view value, std::string& answer)\n"));
}

TEST_CASE("cpp: a zip without a top-level exec or sources says so and lists what it holds") {
    proxy_process proxy(cpp_runtime());
    const std::string program = read_file("/bin/true");
    const std::string zip =
        make_zip({file_entry("hello", program, 0755), file_entry("sub/exec", program, 0755),
                  file_entry("sub/data.txt", "data")});
    CHECK_ERROR_REPLY(
        proxy.init(base64_encode(zip)), 502,
        "compile: no `exec` at the top of the upload, and no C++ sources (*.cpp, *.cc, *.cxx)\n"
        "to build one. A zip runs as is when its program is a file named exec at its top.\n"
        "The upload holds:\n  hello\n  sub/data.txt\n  sub/exec\n");
    // A long listing is cut after ten names.
    std::vector<archive_entry> many;
    for (int i = 0; i < 14; ++i) many.push_back(file_entry("f" + std::to_string(i + 10), "x"));
    const http_reply reply = proxy.init(base64_encode(make_zip(many)));
    CHECK(reply.status == 502);
    const std::string error = json_of(reply).value("error", "");
    CHECK(contains(error, "The upload holds:\n  f10\n"));
    CHECK(contains(error, "  f19\n  ... and 4 more\n"));
    CHECK_FALSE(contains(error, "f20"));
}

TEST_CASE("cpp: a zip's data files land next to exec, its sources and headers do not") {
    proxy_process proxy(cpp_runtime());
    const std::string zip = make_zip({
        file_entry("main.cpp", "#include <fstream>\n#include <sstream>\n#include \"lib/util.hpp\"\n"
                               "nlohmann::json main(nlohmann::json) {\n"
                               "    std::ifstream in(\"data/words.txt\");\n"
                               "    std::stringstream text;\n    text << in.rdbuf();\n"
                               "    return {{\"words\", text.str()}, {\"util\", util()}};\n}\n"),
        file_entry("lib/util.hpp", "#pragma once\n#include \"util.inl\"\nint util();\n"),
        file_entry("lib/util.inl", "// inline parts\n"),
        file_entry("lib/util.h", "// a C header\n"),
        file_entry("lib/util.cpp", "#include \"util.hpp\"\nint util() { return 7; }\n"),
        file_entry("data/words.txt", "alpha beta\n"),
    });
    CHECK_REPLY(proxy.init(base64_encode(zip)), 200, OK_BODY);
    CHECK(json_of(proxy.run(json::object())) == json{{"words", "alpha beta\n"}, {"util", 7}});
    std::vector<std::string> shipped;
    const fs::path bin = proxy.cwd() / "action/1/bin";
    for (const auto& e : fs::recursive_directory_iterator(bin)) {
        if (e.is_regular_file()) shipped.push_back(fs::relative(e.path(), bin).string());
    }
    std::sort(shipped.begin(), shipped.end());
    CHECK(shipped == std::vector<std::string>{"data/words.txt", "exec"});
}

TEST_CASE("cpp: a zip whose top-level exec is a source keeps its data files, not its headers") {
    proxy_process proxy(cpp_runtime());
    const std::string zip = make_zip({
        file_entry("exec", "#include <fstream>\n#include <string>\n#include \"notes.h\"\n"
                           "nlohmann::json main(nlohmann::json) {\n"
                           "    std::ifstream in(\"greeting.txt\");\n    std::string line;\n"
                           "    std::getline(in, line);\n    return {{\"line\", line}};\n}\n"),
        file_entry("notes.h", "// notes\n"),
        file_entry("greeting.txt", "hello there\n"),
    });
    CHECK_REPLY(proxy.init(base64_encode(zip)), 200, OK_BODY);
    CHECK(json_of(proxy.run(json::object())) == json{{"line", "hello there"}});
    CHECK(fs::exists(proxy.cwd() / "action/1/bin/greeting.txt"));
    CHECK_FALSE(fs::exists(proxy.cwd() / "action/1/bin/notes.h"));
}

// Issue 22: the lifecycle hooks. on_init runs once per action process, before its first
// activation; on SIGTERM, once the drain has finished the activation in flight, the proxy
// sends the shutdown line and on_shutdown runs with the time left, before the proxy exits 0.
TEST_CASE("cpp: lifecycle hooks: on_init once before the first run, on_shutdown in the drain") {
    proxy_process proxy(cpp_runtime({{"OW_SHUTDOWN_TIMEOUT_MS", "20000"}}));
    CHECK_REPLY(proxy.init(hooks_zip()), 200, OK_BODY);
    for (int run = 1; run <= 3; ++run) {
        CHECK_REPLY(proxy.run(json::object()), 200,
                    json{{"inits", 1}, {"runs", run}}.dump() + "\n");
    }
    const std::vector<pid_t> action = proxy.children();
    REQUIRE(action.size() == 1);

    const std::string started = (proxy.root() / "started").string();
    auto in_flight = std::async(std::launch::async, [&] {
        return proxy.run(json{{"sleep_ms", 800}, {"started", started}});
    });
    REQUIRE(wait_until([&] { return fs::exists(started); }, std::chrono::seconds(10)));
    ::kill(proxy.pid(), SIGTERM);
    CHECK_REPLY(in_flight.get(), 200, json{{"inits", 1}, {"runs", 4}}.dump() + "\n");
    REQUIRE(wait_until([&] { return !proxy.running(); }, std::chrono::seconds(10)));
    const int status = proxy.stop();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_FALSE(process_alive(action.front()));

    // In order, each once: on_init, the four runs, on_shutdown after the last one.
    const std::string err = proxy.stderr_text();
    CHECK(count_occurrences(err, "hooks: on_init") == 1);
    CHECK(count_occurrences(err, "hooks: on_shutdown") == 1);
    const size_t init = position_of(err, "hooks: on_init");
    const size_t first = position_of(err, "hooks: run 1 done");
    const size_t last = position_of(err, "hooks: run 4 done");
    const size_t shutdown = position_of(err, "hooks: on_shutdown after 4 run(s), time_left_ms=");
    CHECK(init < first);
    CHECK(last < shutdown);
    const long long time_left = std::stoll(err.substr(
        shutdown + std::string("hooks: on_shutdown after 4 run(s), time_left_ms=").size()));
    CHECK(time_left > 0);
    CHECK(time_left <= 20000);
    CHECK_FALSE(contains(err, "starting it again"));
}

TEST_CASE("cpp: lifecycle hooks: an on_init that throws fails /init with its message") {
    const json fail = {{"HOOKS_INIT_FAIL", "1"}};
    const std::string why = "on_init: cannot reach the database at db:5432";
    {
        proxy_process proxy(cpp_runtime());
        CHECK_ERROR_REPLY(proxy.init(hooks_zip(), "main", &fail), 502,
                          "cannot start action: The action did not initialize properly. " + why);
        CHECK(contains(proxy.stderr_text(), "action error: " + why));
    }
    {
        proxy_process proxy(cpp_runtime({{"OW_LOG_INIT_ERROR", "1"}}));
        const http_reply reply = proxy.init(hooks_zip(), "main", &fail);
        CHECK(reply.status == 502);
        const std::string error = json_of(reply).value("error", "");
        CHECK(error.rfind("Cannot start action. Check logs for details.", 0) == 0);
        CHECK_MESSAGE(contains(error, "The action did not initialize properly. " + why), error);
    }
}

TEST_CASE("cpp: a scalar value is refused with the reason, null counts as {} (both entry kinds)") {
    // Issue 41, item 8: the argument is an object or an array, as in single-entrypoint mode
    // (knative_test.cpp); a string, number or boolean `value` used to become {} silently.
    const std::vector<std::pair<json, std::string>> scalars = {
        {"s", "string"}, {42, "number"}, {true, "boolean"}, {-1.5, "number"}, {false, "boolean"}};
    for (const char* source : {"hello.cpp", "trace_raw.cpp"}) {
        CAPTURE(source);
        proxy_process proxy(cpp_runtime());
        REQUIRE(proxy.init(cpp_source(source)).status == 200);
        for (const auto& [value, type] : scalars) {
            CAPTURE(value.dump());
            const http_reply reply = proxy.run(value);
            CHECK(reply.status == 200);  // the launcher's answer: an application error
            CHECK(
                json_of(reply) ==
                json{{"error", "invalid request: the argument must be a dictionary but has type '" +
                                   type + "'"}});
        }
        const http_reply null_value = proxy.run(json(nullptr));
        CHECK(null_value.status == 200);
        CHECK_FALSE(json_of(null_value).contains("error"));
        const stream_texts streams = proxy.check_streams(scalars.size() + 1);
        CHECK(contains(streams.err, "actionloop: invalid request line: the argument must be a "
                                    "dictionary but has type 'string'"));
    }
}
