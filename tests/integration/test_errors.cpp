// What a user sees when something is wrong: /init bodies that are not JSON get upstream's
// texts, a script that never acks says so and how long it was waited for, an exec.env
// mismatch is logged with both values, a crash is logged (with the signal's name) in the
// activation that saw it, and an action finds the files shipped with it by relative path.
#include <doctest/doctest.h>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

const std::string PREFIX = "Error unmarshaling request: ";

proxy_options with_env(env_map env) {
    proxy_options options;
    options.env = std::move(env);
    return options;
}

}  // namespace

TEST_CASE("errors: /init bodies that are not the expected JSON get Go's texts, 400") {
    proxy_process proxy;
    CHECK_ERROR_REPLY(proxy.post("/init", "{not json"), 400,
                      PREFIX + "invalid character 'n' looking for beginning of object key string");
    CHECK_ERROR_REPLY(proxy.post("/init", "{\"value\" 1}"), 400,
                      PREFIX + "invalid character '1' after object key");
    CHECK_ERROR_REPLY(proxy.post("/init", "{\"value\":{} x"), 400,
                      PREFIX + "invalid character 'x' after object key:value pair");
    CHECK_ERROR_REPLY(proxy.post("/init", "[1 2]"), 400,
                      PREFIX + "invalid character '2' after array element");
    CHECK_ERROR_REPLY(proxy.post("/init", "{\"value\":"), 400,
                      PREFIX + "unexpected end of JSON input");
    // Valid JSON of the wrong shape: upstream's text names the Go type it decodes into.
    CHECK_ERROR_REPLY(proxy.post("/init", "[1,2]"), 400,
                      PREFIX + "json: cannot unmarshal array into Go value of type "
                               "openwhisk.initBodyRequest");
    proxy.check_streams(0);
}

TEST_CASE("errors: /run bodies are not validated; the action answers them (as upstream)") {
    proxy_process proxy;
    REQUIRE(proxy.init(fixture_text("echo.sh")).status == 200);
    // echo.sh's jq prints nothing for a line that is not JSON: the answer is not an object.
    CHECK_ERROR_REPLY(proxy.run_raw("{not json"), 502,
                      "The action did not return a dictionary or array.");
    CHECK_REPLY(proxy.run(json{{"a", 1}}), 200, "{\"a\":1}\n");
}

TEST_CASE("errors: a script that never acks is told that no ack arrived, and in how long") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}, {"OW_ACK_TIMEOUT_MS", "300"}}));
    CHECK_ERROR_REPLY(proxy.init(fixture_text("echo.sh")), 502,
                      "cannot start action: The action did not initialize properly: no ack "
                      "arrived on fd 3 in 300 ms (with OW_WAIT_FOR_ACK set, an action writes "
                      "{\"ok\":true} and a newline to fd 3 when it is ready).");
}

TEST_CASE("errors: an exec.env mismatch logs the expected and the actual value") {
    proxy_process proxy(with_env({{"OW_EXECUTION_ENV", "want/env"}}));
    const std::string zip = make_zip(
        {file_entry("exec", fixture_text("echo.sh"), 0755), file_entry("exec.env", "have/env")});
    CHECK(proxy.init(base64_encode(zip)).status == 502);
    CHECK(contains(proxy.stderr_text(),
                   "exec.env mismatch: expected 'want/env', the action's is 'have/env'"));
}

TEST_CASE("errors: a crash is logged with its signal in the activation that saw it") {
    proxy_process proxy;
    const std::string script =
        "#!/bin/bash\nwhile read line; do\n"
        "  case \"$line\" in *segv*) kill -SEGV $$;; *) echo \"$line\" >&3;; esac\ndone\n";
    REQUIRE(proxy.init(script).status == 200);
    CHECK_ERROR_REPLY(proxy.run(json{{"segv", true}}), 400,
                      "command exited (killed by signal 11, SIGSEGV)");
    const stream_texts logs = proxy.check_streams(1);  // that activation's log, no later run
    CHECK(contains(logs.err, "the action exited during the activation (killed by signal 11 "
                             "(SIGSEGV))"));
    const std::string err = proxy.stderr_text();
    CHECK(err.find("killed by signal 11") < err.find(SENTINEL));
}

TEST_CASE("errors: the action runs in its own directory and finds its files by relative path") {
    proxy_process proxy;
    const std::string exec =
        "#!/bin/bash\nwhile read line; do echo \"{\\\"data\\\":\\\"$(cat data.txt)\\\"}\" >&3; "
        "done\n";
    const std::string zip =
        make_zip({file_entry("exec", exec, 0755), file_entry("data.txt", "shipped")});
    REQUIRE(proxy.init(base64_encode(zip)).status == 200);
    CHECK_REPLY(proxy.run(json::object()), 200, "{\"data\":\"shipped\"}\n");
}

// Issue 19 item 6: an action that fails to start is quoted in the /init answer (with
// OW_LOG_INIT_ERROR, as the image runs): its last 20 stderr lines. Its stderr still reaches
// the proxy's, whole and before the proxy's own lines and sentinels.
TEST_CASE("errors: with OW_LOG_INIT_ERROR, a failed start answers the action's last stderr lines") {
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

TEST_CASE("errors: without OW_LOG_INIT_ERROR, a failed start answers upstream's text") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}}));
    CHECK_ERROR_REPLY(proxy.init(fixture_text("start_fails.sh")), 502,
                      "cannot start action: Command exited abruptly during initialization.");
    CHECK(contains(proxy.stderr_text(), "Name or service not known\nexiting"));
}

// Issue 19 item 25 (the proxy's part): a line a script leaves open on stderr is ended before
// the sentinels the proxy writes after its answer.
TEST_CASE("errors: a script's unterminated stderr line is ended before the sentinels") {
    proxy_process proxy;
    const std::string script =
        "#!/bin/bash\nwhile read line; do printf 'half a line' >&2; echo '{}' >&3; done\n";
    REQUIRE(proxy.init(script).status == 200);
    CHECK_REPLY(proxy.run(json::object()), 200, "{}\n");
    CHECK_REPLY(proxy.run(json::object()), 200, "{}\n");
    proxy.check_streams(2);
    const std::string end = std::string(SENTINEL) + "\n";
    CHECK(proxy.stderr_text() == "half a line\n" + end + "half a line\n" + end);
}
