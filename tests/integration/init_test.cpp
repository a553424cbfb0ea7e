// /init against the real proxy: every row of the reference's A.3 table (bodies that do not
// unmarshal get upstream's Go texts), the ack rows of B.4 (and a script that never acks),
// OW_EXECUTION_ENV, OW_LOG_INIT_ERROR (the action's last stderr lines), compile errors,
// -debug re-init and the numbered action/N directories. (Compilers and disks that fail:
// init_faults_test.cpp; archives: archives_test.cpp.)
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

const char* const REINIT = "Cannot initialize the action more than once.";
// Plain text that is neither a script nor ELF: without a compiler it cannot be executed.
const char* const NOT_EXECUTABLE = "this is source code, not a program\n";

proxy_options fake_compiler(env_map env = {}) {
    env["OW_COMPILER"] = fixture_path("fake_compile.sh").string();
    return with_env(std::move(env));
}

std::string init_body(const json& value) { return json{{"value", value}}.dump(); }

}  // namespace

TEST_CASE("init: success answers {\"ok\":true} and writes nothing to the streams") {
    proxy_process proxy;
    CHECK_REPLY(proxy.init(fixture_text("echo.sh")), 200, OK_BODY);
    CHECK(proxy.stdout_text().empty());
    CHECK(proxy.stderr_text().empty());
}

TEST_CASE("init: a second init is refused with 403, logged on stderr, no sentinel") {
    proxy_process proxy;
    REQUIRE(proxy.init(fixture_text("echo.sh")).status == 200);
    CHECK_ERROR_REPLY(proxy.init(fixture_text("echo.sh")), 403, REINIT);
    const stream_texts streams = proxy.check_streams(0);
    CHECK(contains(streams.err, REINIT));
    CHECK_REPLY(proxy.run(json{{"still", "first"}}), 200, "{\"still\":\"first\"}\n");
}

TEST_CASE("init: no code is 403 Missing main/no code to execute.") {
    proxy_process proxy;
    for (const std::string body :
         {"{}", "{\"value\":{}}", "{\"value\":null}", "{\"value\":{\"code\":null}}",
          "{\"value\":{\"code\":\"\"}}",
          "{\"value\":{\"code\":\"\",\"main\":\"\",\"binary\":false,\"env\":null}}"}) {
        INFO("body: " << body);
        CHECK_ERROR_REPLY(proxy.post("/init", body), 403, MISSING_CODE);
    }
    proxy.check_streams(0);
}

TEST_CASE("init: the env of an init without code is not applied") {
    proxy_process proxy;
    const std::string no_code = init_body({{"code", ""}, {"env", {{"SOME_VAR", "x"}}}});
    CHECK_ERROR_REPLY(proxy.post("/init", no_code), 403, MISSING_CODE);
    REQUIRE(proxy.init(fixture_text("env_dump.sh")).status == 200);
    const http_reply run = proxy.run(json::object());
    REQUIRE(run.status == 200);
    CHECK_FALSE(json_of(run).contains("SOME_VAR"));
}

TEST_CASE("init: null main, binary and env are accepted as absent") {
    proxy_process proxy;
    const std::string body = init_body({{"code", fixture_text("echo.sh")},
                                        {"main", nullptr},
                                        {"binary", nullptr},
                                        {"env", nullptr},
                                        {"name", "ignored"}});
    CHECK_REPLY(proxy.post("/init", body), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"a", 1}}), 200, "{\"a\":1}\n");
}

TEST_CASE("init: a body that does not unmarshal is 400 Error unmarshaling request") {
    proxy_process proxy;
    const std::string prefix = "Error unmarshaling request: ";
    CHECK_ERROR_REPLY(proxy.post("/init", "XXX"), 400,
                      prefix + "invalid character 'X' looking for beginning of value");
    CHECK_ERROR_REPLY(proxy.post("/init", ""), 400, prefix + "unexpected end of JSON input");
    CHECK_ERROR_REPLY(proxy.post("/init", "{\"value\":{\"code\":123}}"), 400,
                      prefix + "json: cannot unmarshal number into Go struct field "
                               "initBodyRequest.value.code of type string");
    const http_reply not_object = proxy.post("/init", "{\"value\":\"x\"}");
    CHECK(not_object.status == 400);
    CHECK(json_of(not_object).value("error", "").rfind(prefix, 0) == 0);
    CHECK_ERROR_REPLY(proxy.post("/init", "{not json"), 400,
                      prefix + "invalid character 'n' looking for beginning of object key string");
    CHECK_ERROR_REPLY(proxy.post("/init", "{\"value\" 1}"), 400,
                      prefix + "invalid character '1' after object key");
    CHECK_ERROR_REPLY(proxy.post("/init", "{\"value\":{} x"), 400,
                      prefix + "invalid character 'x' after object key:value pair");
    CHECK_ERROR_REPLY(proxy.post("/init", "[1 2]"), 400,
                      prefix + "invalid character '2' after array element");
    CHECK_ERROR_REPLY(proxy.post("/init", "{\"value\":"), 400,
                      prefix + "unexpected end of JSON input");
    // Valid JSON of the wrong shape: upstream's text names the Go type it decodes into.
    CHECK_ERROR_REPLY(proxy.post("/init", "[1,2]"), 400,
                      prefix + "json: cannot unmarshal array into Go value of type "
                               "openwhisk.initBodyRequest");
    proxy.check_streams(0);
    CHECK_ERROR_REPLY(proxy.run(json::object()), 500, "no action defined yet");
}

TEST_CASE("init: binary code that is not base64 is 400 with the offending byte") {
    proxy_process proxy;
    const std::string body = init_body({{"code", "!!!!"}, {"binary", true}});
    CHECK_ERROR_REPLY(proxy.post("/init", body), 400,
                      "cannot decode the request: illegal base64 data at input byte 0");
    const std::string later = init_body({{"code", "SGVsbG8h!!!!"}, {"binary", true}});
    CHECK_ERROR_REPLY(proxy.post("/init", later), 400,
                      "cannot decode the request: illegal base64 data at input byte 8");
    CHECK_ERROR_REPLY(proxy.run(json::object()), 500, "no action defined yet");
}

TEST_CASE("init: base64 code with binary:true is decoded (E.3 deploy a shell script)") {
    proxy_process proxy;
    const std::string script = replace_all(fixture_text("hello.sh"), "${main}", "main");
    CHECK_REPLY(proxy.init(base64_encode(script)), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"name", "Demo"}}), 200, "{\"main\":\"Hello, Demo\"}\n");
}

TEST_CASE("init: a failed start is 502, the proxy stays uninitialized, a later init works") {
    proxy_process proxy;
    CHECK_ERROR_REPLY(proxy.init(NOT_EXECUTABLE), 502, "cannot start action: command exited");
    CHECK_ERROR_REPLY(proxy.run(json::object()), 500, "no action defined yet");
    CHECK_REPLY(proxy.init(fixture_text("echo.sh")), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"b", 2}}), 200, "{\"b\":2}\n");
    proxy.check_streams(1);
}

TEST_CASE("init: a zip without a top-level exec cannot start without a compiler") {
    proxy_process proxy;
    const std::string zip = make_zip({file_entry("sub/exec", fixture_text("echo.sh"), 0755)});
    CHECK_ERROR_REPLY(proxy.init(base64_encode(zip)), 502, "cannot start action: command exited");
}

TEST_CASE("init: a tar.gz with a top-level exec runs") {
    proxy_process proxy;
    const std::string tgz = make_tar_gz({dir_entry("lib"), file_entry("lib/data.txt", "data"),
                                         file_entry("exec", fixture_text("echo.sh"), 0755)});
    CHECK_REPLY(proxy.init(base64_encode(tgz)), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"t", "gz"}}), 200, "{\"t\":\"gz\"}\n");
    CHECK(read_file(proxy.cwd() / "action/1/bin/lib/data.txt") == "data");
}

TEST_CASE("ack: a good ack (with spaces) starts the action and is never a /run result") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}}));
    CHECK_REPLY(proxy.init(fixture_text("ack_hello.sh")), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"n", 1}}), 200, "{\"n\":1}\n");
    CHECK_REPLY(proxy.run(json{{"n", 2}}), 200, "{\"n\":2}\n");
}

TEST_CASE("ack: an ack that is not JSON is a 502 with the parse error") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}}));
    CHECK_ERROR_REPLY(proxy.init(fixture_text("badack.sh")), 502,
                      "cannot start action: invalid character 'b' looking for beginning of value");
    CHECK_ERROR_REPLY(proxy.run(json::object()), 500, "no action defined yet");
}

TEST_CASE("ack: an ack without ok:true is 502 The action did not initialize properly.") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}}));
    const std::string expected = "cannot start action: The action did not initialize properly.";
    CHECK_ERROR_REPLY(proxy.init(fixture_text("ack_empty.sh")), 502, expected);
    CHECK_ERROR_REPLY(proxy.init(fixture_text("ack_false.sh")), 502, expected);
}

TEST_CASE("ack: exiting before the ack is 502 Command exited abruptly during initialization.") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}}));
    CHECK_ERROR_REPLY(proxy.init(fixture_text("exits_now.sh")), 502,
                      "cannot start action: Command exited abruptly during initialization.");
    const stream_texts streams = proxy.check_streams(0);
    CHECK(streams.out == "hi");
}

TEST_CASE("ack: the action sees __OW_WAIT_FOR_ACK") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "yes"}}));
    const std::string code = "#!/bin/bash\necho '{\"ok\":true}' >&3\n"
                             "while read line\ndo jq -cn env >&3\ndone\n";
    REQUIRE(proxy.init(code).status == 200);
    CHECK(json_of(proxy.run(json::object())).value("__OW_WAIT_FOR_ACK", "") == "yes");
}

TEST_CASE("ack: a script that never acks is told that no ack arrived, and in how long") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}, {"OW_ACK_TIMEOUT_MS", "300"}}));
    CHECK_ERROR_REPLY(proxy.init(fixture_text("echo.sh")), 502,
                      "cannot start action: The action did not initialize properly: no ack "
                      "arrived on fd 3 in 300 ms (with OW_WAIT_FOR_ACK set, an action writes "
                      "{\"ok\":true} and a newline to fd 3 when it is ready).");
}

TEST_CASE("log init error: a start failure logs the error and sentinels, the body names it") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}, {"OW_LOG_INIT_ERROR", "1"}}));
    CHECK_ERROR_REPLY(proxy.init(fixture_text("exits_now.sh")), 502,
                      "Cannot start action. Check logs for details. (Command exited abruptly "
                      "during initialization.)");
    const std::string message = "Command exited abruptly during initialization.";
    const stream_texts streams = proxy.check_streams(1);
    CHECK(streams.out == "hi");
    CHECK(streams.err == message);
    const std::string err = proxy.stderr_text();
    CHECK(err.find(message + "\n") < err.find(SENTINEL));
}

TEST_CASE("log init error: a compile failure logs the compiler output, body is generic") {
    proxy_process proxy(fake_compiler({{"OW_LOG_INIT_ERROR", "1"}}));
    CHECK_ERROR_REPLY(proxy.init(NOT_EXECUTABLE, "noisy"), 502,
                      "The action failed to generate or locate a binary. See logs for details.");
    const stream_texts streams = proxy.check_streams(1);
    CHECK(streams.out.empty());
    CHECK(streams.err == "error in stdout\nerror in stderr");
    CHECK(contains(proxy.stderr_text(), "error in stdout\nerror in stderr\n"));
}

// Issue 19 item 6: an action that fails to start is quoted in the /init answer (with
// OW_LOG_INIT_ERROR, as the image runs): its last 20 stderr lines. Its stderr still reaches
// the proxy's, whole and before the proxy's own lines and sentinels.
TEST_CASE("log init error: with OW_LOG_INIT_ERROR, a failed start answers the action's last stderr "
          "lines") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}, {"OW_LOG_INIT_ERROR", "1"}}));
    const http_reply reply = proxy.init(fixture_text("start_fails.sh"));
    CHECK(reply.status == 502);
    std::string tail;
    for (int i = 7; i <= 24; ++i) tail += "starting, step " + std::to_string(i) + "\n";
    tail += "cannot connect to redis://nowhere:6379: Name or service not known\nexiting";
    CHECK(json_of(reply) ==
          json{{"error",
                "Cannot start action. Check logs for details. (Command exited abruptly during "
                "initialization.) The action's last lines on stderr:\n" +
                    tail}});
    const std::string err = proxy.stderr_text();
    CHECK(contains(err, "starting, step 1\nstarting, step 2\n"));
    const std::string said = "Name or service not known\nexiting\nCommand exited abruptly";
    CHECK(contains(err, said));  // the open line is ended before the proxy's own
    CHECK(err.find(said) < err.find(SENTINEL));
}

TEST_CASE("log init error: without OW_LOG_INIT_ERROR, a failed start answers upstream's text") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}}));
    CHECK_ERROR_REPLY(proxy.init(fixture_text("start_fails.sh")), 502,
                      "cannot start action: Command exited abruptly during initialization.");
    CHECK(contains(proxy.stderr_text(), "Name or service not known\nexiting"));
}

TEST_CASE("compile: failures without OW_LOG_INIT_ERROR return the raw error, no sentinel") {
    proxy_process proxy(fake_compiler());
    CHECK_ERROR_REPLY(proxy.init(NOT_EXECUTABLE, "noisy"), 502,
                      "error in stdout\nerror in stderr\n");
    CHECK_ERROR_REPLY(proxy.init(NOT_EXECUTABLE, "silent"), 502, "exit status 1");
    CHECK_ERROR_REPLY(proxy.init(NOT_EXECUTABLE, "no_exec"), 502, "cannot compile");
    CHECK_ERROR_REPLY(proxy.init(NOT_EXECUTABLE, "warn"), 502,
                      "warning: this counts as a failure\n");
    proxy.check_streams(0);
    CHECK_ERROR_REPLY(proxy.run(json::object()), 500, "no action defined yet");
}

TEST_CASE("compile: the compiler gets MAIN and relative src and bin dirs") {
    proxy_process proxy(fake_compiler());
    CHECK_REPLY(proxy.init(NOT_EXECUTABLE, "custom"), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json::object()), 200,
                "{\"main\":\"custom\",\"src\":\"action/1/src\",\"bin\":\"action/1/bin\"}\n");
}

TEST_CASE("compile: a #! script is run as is even when a compiler is set") {
    proxy_process proxy(fake_compiler());
    CHECK_REPLY(proxy.init(fixture_text("echo.sh"), "custom"), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"as", "is"}}), 200, "{\"as\":\"is\"}\n");
}

TEST_CASE("compile: OW_SAVE_JAR keeps a jar unexpanded for the compiler") {
    proxy_process proxy(fake_compiler({{"OW_SAVE_JAR", "exec.jar"}}));
    const std::string jar = make_zip({file_entry("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n"),
                                      file_entry("hello.txt", "hello")});
    CHECK_REPLY(proxy.init(base64_encode(jar), "jar"), 200, OK_BODY);
    CHECK(read_file(proxy.cwd() / "action/1/src/exec.jar") == jar);
}

// Upstream's Example_executionEnv_check (the Go proxy's unit test), exactly.
TEST_CASE("exec env: a mismatch is 502 and printed on stdout, a match starts") {
    proxy_process proxy(with_env({{"OW_EXECUTION_ENV", "bad/env"}}));
    const std::string echo = fixture_text("echo.sh");
    const std::string wrong =
        make_zip({file_entry("exec", echo, 0755), file_entry("exec.env", "exec/env")});
    CHECK_ERROR_REPLY(proxy.init(base64_encode(wrong)), 502,
                      "cannot start action: Execution environment version mismatch. "
                      "See logs for details.");
    CHECK(proxy.stdout_text() ==
          "Expected exec.env should start with bad/env\nActual value: exec/env");
    const std::string right = make_zip({file_entry("exec", fixture_text("env_dump.sh"), 0755),
                                        file_entry("exec.env", "bad/env\n")});
    CHECK_REPLY(proxy.init(base64_encode(right)), 200, OK_BODY);
    CHECK(json_of(proxy.run(json::object())).value("__OW_EXECUTION_ENV", "") == "bad/env");
}

// Upstream's open error, then what to do (issue 41 item 14).
const std::string NO_EXEC_ENV =
    "open ./action/1/bin/exec.env: no such file or directory (this runtime's OW_EXECUTION_ENV "
    "is some/env: it starts only an action whose exec.env holds that; compile and proxy "
    "-compile write it when OW_EXECUTION_ENV=some/env is set where they run, as in the image)";

TEST_CASE("exec env: a missing exec.env is 502 with the open error and what to do") {
    proxy_process proxy(with_env({{"OW_EXECUTION_ENV", "some/env"}}));
    CHECK_ERROR_REPLY(proxy.init(fixture_text("echo.sh")), 502,
                      "cannot start action: " + NO_EXEC_ENV);
}

// Issue 41 item 14: the image's settings (OW_LOG_INIT_ERROR too) used to answer a zip without
// exec.env (the README's, compiled without OW_EXECUTION_ENV) with only "Check logs for
// details.", the reason in the log alone.
TEST_CASE("exec env: with OW_LOG_INIT_ERROR, a missing exec.env is named in the answer") {
    proxy_process proxy(with_env({{"OW_EXECUTION_ENV", "some/env"}, {"OW_LOG_INIT_ERROR", "1"}}));
    const std::string zip = make_zip({file_entry("exec", fixture_text("echo.sh"), 0755)});
    CHECK_ERROR_REPLY(proxy.init(base64_encode(zip)), 502,
                      "Cannot start action. Check logs for details. (" + NO_EXEC_ENV + ")");
    CHECK(contains(proxy.stderr_text(), NO_EXEC_ENV + "\n"));
}

TEST_CASE("exec env: an exec.env mismatch logs the expected and the actual value") {
    proxy_process proxy(with_env({{"OW_EXECUTION_ENV", "want/env"}}));
    const std::string zip = make_zip(
        {file_entry("exec", fixture_text("echo.sh"), 0755), file_entry("exec.env", "have/env")});
    CHECK(proxy.init(base64_encode(zip)).status == 502);
    CHECK(contains(proxy.stderr_text(),
                   "exec.env mismatch: expected 'want/env', the action's is 'have/env'"));
}

TEST_CASE("dirs: each init attempt takes the next action/N, a failed start removes it") {
    proxy_process proxy;
    REQUIRE(proxy.init(NOT_EXECUTABLE).status == 502);
    CHECK_FALSE(std::filesystem::exists(proxy.cwd() / "action/1"));
    REQUIRE(proxy.init(fixture_text("echo.sh")).status == 200);
    CHECK(std::filesystem::is_regular_file(proxy.cwd() / "action/2/bin/exec"));
    CHECK_FALSE(std::filesystem::exists(proxy.cwd() / "action/2/src"));
}

TEST_CASE("dirs: numbering continues after the highest existing directory") {
    proxy_options options;
    options.prepare = [](const std::filesystem::path& cwd) {
        std::filesystem::create_directories(cwd / "action/5");
        std::filesystem::create_directories(cwd / "action/notanumber");
    };
    proxy_process proxy(options);
    REQUIRE(proxy.init(fixture_text("echo.sh")).status == 200);
    CHECK(std::filesystem::is_regular_file(proxy.cwd() / "action/6/bin/exec"));
}

TEST_CASE("debug: -debug allows re-init, new code serves, a failed re-init keeps the old") {
    proxy_process proxy(with_env({}, {"-debug"}));
    REQUIRE(proxy.init(fixture_text("echo.sh")).status == 200);
    CHECK_REPLY(proxy.run(json{{"v", 1}}), 200, "{\"v\":1}\n");
    const std::vector<pid_t> first = proxy.children();

    const std::string second = replace_all(fixture_text("hello.sh"), "${main}", "second");
    CHECK_REPLY(proxy.init(second), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"name", "Demo"}}), 200, "{\"second\":\"Hello, Demo\"}\n");
    for (pid_t old : first) {
        CHECK(wait_until([old] { return !process_alive(old); }, std::chrono::seconds(5)));
    }

    CHECK(proxy.init(NOT_EXECUTABLE).status == 502);
    CHECK_REPLY(proxy.run(json{{"name", "Again"}}), 200, "{\"second\":\"Hello, Again\"}\n");
    CHECK(std::filesystem::exists(proxy.cwd() / "action/3"));  // -debug keeps failed dirs
}

// The action a re-init replaces serves what was sent to it before, then stops; the /runs sent
// after the re-init's answer go to the new one.
TEST_CASE("debug: a re-init while a run is in flight: the old action answers it, then stops") {
    proxy_process proxy(with_env({}, {"-debug"}));
    const std::string gate = (proxy.root() / "gate").string();
    REQUIRE(::mkfifo(gate.c_str(), 0600) == 0);
    REQUIRE(proxy.init(fixture_text("gate.sh")).status == 200);
    const std::vector<pid_t> first = proxy.children();
    auto in_flight = std::async(std::launch::async, [&] {
        return proxy.run(json{{"gate", gate}, {"n", 1}});
    });
    REQUIRE(wait_until([&] { return std::filesystem::exists(gate + ".started"); },
                       std::chrono::seconds(10)));
    const std::string second = replace_all(fixture_text("hello.sh"), "${main}", "second");
    CHECK_REPLY(proxy.init(second), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"name", "Demo"}}), 200, "{\"second\":\"Hello, Demo\"}\n");
    CHECK(in_flight.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
    std::ofstream(gate) << "go\n";
    CHECK_REPLY(in_flight.get(), 200, json{{"gate", gate}, {"n", 1}}.dump() + "\n");
    for (pid_t old : first) {
        CHECK(wait_until([old] { return !process_alive(old); }, std::chrono::seconds(5)));
    }
    CHECK_REPLY(proxy.run(json{{"name", "Again"}}), 200, "{\"second\":\"Hello, Again\"}\n");
}
