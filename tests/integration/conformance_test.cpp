// OpenWhisk's own runtime tests, replayed against the real proxy: BasicActionRunnerTests with
// the actionloop-base fixtures (no compiler, no ack), ActionLoopContainerTests and the
// upstream Go proxy's unit-test expectations.
#include <doctest/doctest.h>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

json result_of(const http_reply& reply) { return json_of(reply); }

}  // namespace

TEST_CASE("E.2.1 handle initialization with no code") {
    proxy_process proxy;
    const http_reply reply =
        proxy.post("/init", R"({"value":{"code":"","main":"","binary":false,"env":null}})");
    CHECK(reply.status != 200);
    CHECK_ERROR_REPLY(reply, 403, MISSING_CODE);
}

TEST_CASE("E.2.2 handle initialization with no content") {
    proxy_process proxy;
    const http_reply reply = proxy.post("/init", "{}");
    CHECK(reply.status != 200);
    CHECK(result_of(reply) == json{{"error", MISSING_CODE}});
    CHECK_ERROR_REPLY(reply, 403, MISSING_CODE);
}

TEST_CASE("E.2.3 run and report an error for function not returning a json object") {
    proxy_process proxy;
    CHECK(proxy.init(fixture_text("not_json.sh")).status == 200);
    const http_reply reply = proxy.run_raw("{}");
    CHECK(reply.status != 200);
    CHECK_ERROR_REPLY(reply, 502, "The action did not return a dictionary or array.");
    const stream_texts streams = proxy.check_streams(1);
    CHECK(streams.out.empty());
    CHECK(streams.err.empty());
}

TEST_CASE("E.2.4 fail to initialize a second time") {
    proxy_process proxy;
    CHECK(proxy.init(fixture_text("echo.sh")).status == 200);
    const http_reply reply = proxy.init(fixture_text("echo.sh"));
    CHECK(reply.status != 200);
    CHECK(result_of(reply) == json{{"error", "Cannot initialize the action more than once."}});
    const stream_texts streams = proxy.check_streams(0);
    CHECK(contains(streams.out + streams.err, "Cannot initialize the action more than once."));
}

TEST_CASE("E.2.5 invoke non-standard entry point") {
    proxy_process proxy;
    CHECK(proxy.init(fixture_text("echo.sh"), "niam").status == 200);
    const http_reply reply = proxy.run(json{{"string", "hello"}});
    CHECK(reply.status == 200);
    CHECK(result_of(reply) == json{{"string", "hello"}});
    const stream_texts streams = proxy.check_streams(1);
    CHECK(streams.out.empty());
    CHECK(streams.err.empty());
}

TEST_CASE("E.2.6 echo arguments and print message to stdout/stderr") {
    proxy_process proxy;
    CHECK(proxy.init(fixture_text("echo_logs.sh")).status == 200);
    const json inputs[] = {{{"string", "hello"}},
                           {{"string", "❄ ☃ ❄"}},
                           {{"numbers", {42, 1}}},
                           {{"object", {{"a", "A"}}}}};
    for (const json& input : inputs) {
        const http_reply reply = proxy.run(input);
        CHECK(reply.status == 200);
        CHECK(result_of(reply) == input);
    }
    const stream_texts streams = proxy.check_streams(4);
    CHECK(contains(streams.out, "hello stdout"));
    CHECK(contains(streams.err, "hello stderr"));
}

TEST_CASE("E.2.7 handle unicode in source, input params, logs, and result") {
    proxy_process proxy;
    CHECK(proxy.init(fixture_text("unicode.sh")).status == 200);
    const http_reply reply = proxy.run(json{{"delimiter", "❄"}});
    CHECK(result_of(reply).value("winter", "") == "❄ ☃ ❄");
    const stream_texts streams = proxy.check_streams(1);
    CHECK(contains(streams.out, "❄ ☃ ❄"));
}

TEST_CASE("E.2.8 export environment variables before initialization") {
    proxy_process proxy;
    const json env = {{"SOME_VAR", "xyz"}, {"ANOTHER_VAR", ""}};
    CHECK(proxy.init(fixture_text("env_params.sh"), "main", &env).status == 200);
    const http_reply reply = proxy.run(json::object());
    CHECK(reply.status == 200);
    CHECK(result_of(reply) == env);
    const stream_texts streams = proxy.check_streams(1);
    CHECK(streams.out.empty());
    CHECK(streams.err.empty());
}

TEST_CASE("E.2.9 confirm expected environment variables") {
    proxy_options options;
    options.env = {{"__OW_API_HOST", "xyz"}};
    proxy_process proxy(options);
    CHECK(proxy.init(fixture_text("env.sh")).status == 200);
    const json extra = {{"api_key", "abc"},       {"namespace", "zzz"},
                        {"action_name", "xxx"},   {"action_version", "0.0.1"},
                        {"activation_id", "iii"}, {"deadline", "123"}};
    const http_reply reply = proxy.run(json::object(), extra);
    CHECK(reply.status == 200);
    json expected = extra;
    expected["api_host"] = "xyz";
    CHECK(result_of(reply) == expected);
    const stream_texts streams = proxy.check_streams(1);
    CHECK(streams.out.empty());
    CHECK(streams.err.empty());
}

TEST_CASE("E.2.10 echo a large input") {
    proxy_process proxy;
    CHECK(proxy.init(fixture_text("echo.sh")).status == 200);
    const json input = {{"arg", std::string(1048561, 'a')}};
    const std::string body = json{{"value", input}}.dump();
    CHECK(body.size() == 1048581);
    const http_reply reply = proxy.run_raw(body);
    CHECK(reply.body.size() <= 1048576);
    CHECK(result_of(reply) == input);
}

TEST_CASE("E.3 run sample with init that does nothing") {
    proxy_process proxy;
    CHECK(proxy.post("/init", "{}").status == 403);
    CHECK(proxy.run_raw("{}").status == 500);
}

TEST_CASE("E.3 deploy a shell script (base64, binary:true)") {
    proxy_process proxy;
    const std::string script = replace_all(fixture_text("hello.sh"), "${main}", "main");
    const std::string code = base64_encode(script);
    REQUIRE(is_binary_code(code));
    CHECK(proxy.init(code).status == 200);
    const http_reply reply = proxy.run(json{{"name", "Demo"}});
    CHECK(reply.status == 200);
    CHECK(result_of(reply) == json{{"main", "Hello, Demo"}});
    // The action's stdout is a pipe the proxy forwards: it may trail the answer a little.
    CHECK(wait_until([&] { return contains(proxy.stdout_text(), "name=Demo"); },
                     std::chrono::seconds(5)));
}

TEST_CASE("E.3 deploy a zip based script (no unix modes: the proxy makes exec executable)") {
    proxy_process proxy;
    const std::string script = replace_all(fixture_text("hello.sh"), "${main}", "exec");
    const std::string zip = make_zip({file_entry("exec", script)}, false);
    CHECK(proxy.init(base64_encode(zip)).status == 200);
    const http_reply reply = proxy.run(json{{"name", "Demo"}});
    CHECK(reply.status == 200);
    CHECK(result_of(reply) == json{{"exec", "Hello, Demo"}});
}

TEST_CASE("E.6 Example_startTestServer") {
    proxy_process proxy;
    CHECK(proxy.post("/init", "{}").body == error_body(MISSING_CODE));
    CHECK(proxy.post("/init", "XXX").body ==
          error_body("Error unmarshaling request: invalid character 'X' looking for beginning "
                     "of value"));
    CHECK(proxy.run_raw("{}").body == error_body("no action defined yet"));
    CHECK(proxy.run_raw("XXX").body == error_body("no action defined yet"));
}

TEST_CASE("E.6 Example_badinit_nocompiler") {
    proxy_process proxy;
    CHECK_ERROR_REPLY(proxy.run_raw("{}"), 500, "no action defined yet");
    CHECK_ERROR_REPLY(proxy.post("/init", "{}"), 403, MISSING_CODE);
    const std::string go_source = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n";
    CHECK_ERROR_REPLY(proxy.init(go_source), 502, "cannot start action: command exited");
    CHECK_ERROR_REPLY(proxy.init(read_file("/etc/passwd")), 502,
                      "cannot start action: command exited");
    CHECK_ERROR_REPLY(proxy.run_raw("{}"), 500, "no action defined yet");
}

TEST_CASE("E.6 Example_shell_nocompiler: raw answer spacing and log order") {
    proxy_process proxy;
    CHECK_REPLY(proxy.init(fixture_text("greet.sh")), 200, OK_BODY);
    CHECK_REPLY(proxy.run_raw("{\"name\":\"Mike\"}"), 200, "{\"hello\": \"Mike\"}\n");
    proxy.check_streams(1);
    CHECK(proxy.stdout_text() == std::string("msg=hello Mike\n") + SENTINEL + "\n");
    CHECK(proxy.stderr_text() == std::string(SENTINEL) + "\n");
}

TEST_CASE("E.6 Example_badcompile: OW_LOG_INIT_ERROR with a noisy compiler") {
    proxy_options options;
    options.env = {{"OW_COMPILER", fixture_path("fake_compile.sh").string()},
                   {"OW_LOG_INIT_ERROR", "1"}};
    proxy_process proxy(options);
    CHECK_ERROR_REPLY(proxy.init("not a script\n", "noisy"), 502,
                      "The action failed to generate or locate a binary. See logs for details.");
    proxy.check_streams(1);
    CHECK(proxy.stderr_text() ==
          std::string("error in stdout\nerror in stderr\n\n") + SENTINEL + "\n");
}

// E.6 Example_executionEnv_check: in init_test.cpp, "exec env: a mismatch ...".

TEST_CASE("E.6 executor: commands that exit or cannot run are command exited") {
    proxy_process proxy;
    const std::string elf_true = read_file("/bin/true");
    REQUIRE(elf_true.size() > 52);
    // A binary that cannot run (truncated ELF) and text that is not a script.
    CHECK_ERROR_REPLY(proxy.init(base64_encode(elf_true.substr(0, 100))), 502,
                      "cannot start action: command exited");
    CHECK_ERROR_REPLY(proxy.init("/etc/passwd"), 502, "cannot start action: command exited");
}

TEST_CASE("E.6 executor: ack variants") {
    proxy_options options;
    options.env = {{"OW_WAIT_FOR_ACK", "1"}};
    proxy_process proxy(options);
    CHECK(json_of(proxy.init(fixture_text("exits_now.sh")))["error"] ==
          "cannot start action: Command exited abruptly during initialization.");
    CHECK(json_of(proxy.init(fixture_text("badack.sh")))["error"] ==
          "cannot start action: invalid character 'b' looking for beginning of value");
    CHECK(json_of(proxy.init(fixture_text("ack_empty.sh")))["error"] ==
          "cannot start action: The action did not initialize properly.");
    CHECK_REPLY(proxy.init(fixture_text("ack_hello.sh")), 200, OK_BODY);
    CHECK(wait_until([&] { return !proxy.stdout_text().empty(); }, std::chrono::seconds(5)));
    CHECK(proxy.stdout_text() == "hi\n");
}

TEST_CASE("E.6 executor env and Example_SetEnv: the init env reaches the action") {
    proxy_process proxy;
    const json env = {{"TEST_HELLO", "WORLD"}, {"TEST_HI", "ALL"},
                      {"s", "string"},         {"n", 123},
                      {"a", {1, 2, 3}},        {"o", {{"a", 1}, {"b", 2}}}};
    REQUIRE(proxy.init(fixture_text("env_dump.sh"), "main", &env).status == 200);
    const json seen = json_of(proxy.run(json::object()));
    CHECK(seen.value("TEST_HELLO", "") == "WORLD");
    CHECK(seen.value("TEST_HI", "") == "ALL");
    CHECK(seen.value("s", "") == "string");
    CHECK(seen.value("n", "") == "123");
    CHECK(seen.value("a", "") == "[1,2,3]");
    CHECK(seen.value("o", "") == "{\"a\":1,\"b\":2}");
    CHECK(seen.contains("__OW_PROXY_VERSION"));
}

TEST_CASE("E.6 Example_venv: symlinks inside the action dir survive extraction") {
    proxy_process proxy;
    const std::string exec = "#!/bin/bash\ncd \"$(dirname \"$0\")\"\nwhile read line\n"
                             "do echo \"{\\\"link\\\":\\\"$(cat lib/link)\\\"}\" >&3\ndone\n";
    const std::string zip =
        make_zip({file_entry("exec", exec, 0755), dir_entry("lib"),
                  file_entry("lib/data.txt", "inside"), symlink_entry("lib/link", "data.txt")});
    CHECK_REPLY(proxy.init(base64_encode(zip)), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json::object()), 200, "{\"link\":\"inside\"}\n");
    CHECK(std::filesystem::is_symlink(proxy.cwd() / "action/1/bin/lib/link"));
}
