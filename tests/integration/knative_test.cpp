// Single-entrypoint (Knative) mode through the real proxy: __OW_RUNTIME_PLATFORM=knative, every
// request to /, the action from the request's `init` (stem cell) or from __OW_ACTION_*
// (dedicated), answers as web responses. C++ sources compiled by the real `compile`, a zip,
// and #! scripts; exact statuses, bodies and headers.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

const char* const JSON_UTF8 = "application/json; charset=utf-8";

std::string cpp_source(const std::string& name) { return fixture_text("cpp/knative/" + name); }

proxy_options knative_cpp(env_map extra = {}) {
    extra["__OW_RUNTIME_PLATFORM"] = "knative";
    return cpp_runtime(std::move(extra));
}

// Scripts: no compiler, no ack (the fixtures speak the plain line protocol).
proxy_options knative_plain(env_map extra = {}) {
    proxy_options options;
    options.env = std::move(extra);
    options.env["__OW_RUNTIME_PLATFORM"] = "knative";
    return options;
}

json init_of(const std::string& code, json extra = json::object()) {
    extra["code"] = code;
    return extra;
}

// An exact error answer of the mode: compact {"error":…}, JSON, with Content-Length.
void check_error(const http_reply& reply, int status, const std::string& message) {
    CHECK_MESSAGE(reply.status == status, "transport: " << reply.error << " body: " << reply.body);
    CHECK(reply.body == json{{"error", message}}.dump());
    CHECK(reply.header("content-type") == "application/json");
    CHECK(reply.header("content-length") == std::to_string(reply.body.size()));
}

// A 200 web answer with this body and Content-Type, Content-Length and the default CORS.
void check_page(const http_reply& reply, const std::string& body, const std::string& type) {
    CHECK_MESSAGE(reply.status == 200, "transport: " << reply.error << " body: " << reply.body);
    CHECK(reply.body == body);
    CHECK(reply.header("content-type") == type);
    CHECK(reply.header("content-length") == std::to_string(body.size()));
    CHECK(reply.header("access-control-allow-origin") == "*");
    CHECK(reply.header("access-control-allow-methods") ==
          "OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH");
    CHECK(reply.header("access-control-allow-headers") ==
          "Authorization, Origin, X-Requested-With, Content-Type, Accept, User-Agent");
}

std::string request_of(const std::string& method, const std::string& target,
                       const std::string& headers, const std::string& body) {
    return method + " " + target + " HTTP/1.1\r\nHost: localhost\r\n" + headers +
           "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
           body;
}

}  // namespace

TEST_CASE("knative: an unsupported __OW_RUNTIME_PLATFORM exits 9 without listening") {
    temp_dir dir;
    for (const std::string value : {"bogus", "", "Knative"}) {
        env_map env = path_only_env();
        env["__OW_RUNTIME_PLATFORM"] = value;
        const command_result result = run_command({ACTIONLOOP_PROXY_BIN, "-port", "1"}, "", env,
                                                  dir.path(), std::chrono::seconds(10));
        CHECK(result.exit_code == 9);
        CHECK(result.err ==
              "__OW_RUNTIME_PLATFORM (" + value +
                  ") is not supported by the runtime. Accepted values: openwhisk (the default, "
                  "also when unset) and knative, in lower case.\n");
    }
}

TEST_CASE("knative: openwhisk is the classic mode, knative serves the action on / (and /health), "
          "not /init or /run") {
    proxy_options openwhisk;
    openwhisk.env["__OW_RUNTIME_PLATFORM"] = "openwhisk";
    proxy_process classic(openwhisk);
    CHECK_REPLY(classic.init(fixture_text("echo.sh")), 200, OK_BODY);
    CHECK_REPLY(classic.run(json{{"a", 1}}), 200, "{\"a\":1}\n");

    proxy_process proxy(knative_plain());
    check_error(proxy.post("/init", init_payload(fixture_text("echo.sh")).dump()), 500,
                "Bad request.");
    check_error(proxy.post("/run", "{\"value\":{}}"), 500, "Bad request.");
    check_error(proxy.get("/"), 500, "Bad request.");  // GET is not enabled
    check_error(proxy.post("/", "{\"value\":{}"), 500, "Bad request.");
    check_error(proxy.post("/", "\"text\""), 500, "Bad request.");
    check_error(proxy.post("/", "{\"value\":{}}"), 403, "System not initialized.");
    check_error(proxy.post("/", "{\"init\":{\"main\":\"main\"}}"), 403,
                "Missing main/no code to execute.");
    check_error(proxy.post("/", "{\"init\":{\"code\":\"x\",\"binary\":\"yes\"}}"), 500,
                "internal error during request processing.");
    CHECK_REPLY(proxy.get("/health"), 200, "{\"ok\":true}\n");
}

TEST_CASE("knative: hello, init alone then a run (C++ source)") {
    proxy_process proxy(knative_cpp());
    const http_reply init =
        proxy.post("/", json{{"init", init_of(cpp_source("hello_world.cpp"))}}.dump());
    CHECK_REPLY(init, 200, "{\"ok\":true}");
    check_page(proxy.post("/", "{\"activation\":{},\"value\":{}}"),
               "{\"payload\":\"Hello World!\"}", JSON_UTF8);
    check_page(proxy.post("/", "{}"), "{\"payload\":\"Hello World!\"}", JSON_UTF8);
    check_error(proxy.post("/", json{{"init", init_of(cpp_source("hello_world.cpp"))}}.dump()), 403,
                "Cannot initialize the action more than once.");
    check_error(proxy.post("/", "{\"value\":\"Joe\"}"), 403,
                "Internal system error: the argument must be a dictionary but has type 'string'.");
    // No sentinels in this mode with plain lines (the test below waits for the lines first).
    CHECK(sentinel_count(proxy.stdout_text() + proxy.stderr_text()) == 0);
}

TEST_CASE("knative: params, init and run in one request (C++ source)") {
    proxy_process proxy(knative_cpp());
    const json request = {{"init", init_of(cpp_source("hello_params.cpp"), {{"main", "main"}})},
                          {"activation", {{"namespace", "ns"}}},
                          {"value", {{"name", "Joe"}, {"place", "TX"}}}};
    check_page(proxy.post("/", request.dump()), "{\"payload\":\"Hello Joe from TX!\"}", JSON_UTF8);
    // A run without activation: the value alone.
    check_page(proxy.post("/", "{\"value\":{\"name\":\"Ann\"}}"),
               "{\"payload\":\"Hello Ann from undefined!\"}", JSON_UTF8);
}

TEST_CASE("knative: a web action with and without input (C++ source)") {
    proxy_process proxy(knative_cpp());
    const json init = {{"init", init_of(cpp_source("web_page.cpp"))}};
    CHECK_REPLY(proxy.post("/", init.dump()), 200, "{\"ok\":true}");
    check_page(proxy.post("/", "{\"activation\":{},\"value\":{\"name\":\"Joe\"}}"),
               "<html><body><h3>hello Joe</h3></body></html>", "text/html; charset=utf-8");
    check_page(proxy.post("/", "{\"activation\":{}}"),
               "<html><body><h3>you did not tell me who you are.</h3></body></html>",
               "text/html; charset=utf-8");
    // The request's Access-Control-Request-Headers comes back.
    const http_reply echoed = proxy.post("/", "{}", std::chrono::seconds(60));
    CHECK(echoed.status == 200);
    const http_reply asked = http_post(proxy.port(), "/", "{}", std::chrono::seconds(60),
                                       {{"Access-Control-Request-Headers", "X-Mine"}});
    CHECK(asked.header("access-control-allow-headers") == "X-Mine");
}

TEST_CASE("knative: a raw web action gets the request as __ow_* fields (C++ source)") {
    proxy_process proxy(knative_cpp({{"__OW_NAMESPACE", "guest"}}));
    const json init = {{"init", init_of(cpp_source("web_raw.cpp"), {{"raw", true}})}};
    CHECK_REPLY(proxy.post("/", init.dump()), 200, "{\"ok\":true}");
    const std::string body = "{\"activation\":{},\"value\":{\"name\":\"Joe\"}}";
    const http_reply reply = proxy.raw(
        request_of("POST", "/?a=1&b=x+y%21&a=2&c",
                   "Content-Type: application/json\r\nX-Twice: 1\r\nx-twice: 2\r\n", body));
    const std::string expected =
        json{{"response",
              {{"__ow_method", "POST"},
               {"__ow_headers",
                {{"host", "localhost"},
                 {"content-type", "application/json"},
                 {"x-twice", "1, 2"},
                 {"content-length", std::to_string(body.size())},
                 {"connection", "close"}}},
               {"__ow_path", ""},
               {"__ow_user", "guest"},
               {"__ow_body", "eyJuYW1lIjoiSm9lIn0="},
               {"__ow_query", {{"a", {"1", "2"}}, {"b", "x y!"}, {"c", ""}}}}}}
            .dump();
    CHECK(json_of(reply) == json::parse(expected));
    CHECK(reply.header("content-type") == JSON_UTF8);
    // Raw lasts for the action's life; a request without activation gets the value alone.
    CHECK(json_of(proxy.post("/", "{\"value\":{\"k\":1}}")) == json{{"response", {{"k", 1}}}});
}

TEST_CASE("knative: dedicated C++ source from __OW_ACTION_*: status, headers, context") {
    proxy_process proxy(knative_cpp(
        {{"__OW_ACTION_CODE", cpp_source("web_status.cpp")}, {"__OW_ACTION_NAME", "/ns/status"}}));
    const json request = {{"activation", {{"transaction_id", "tx-7"}, {"deadline", 1000000}}},
                          {"value", {{"id", "42"}}}};
    const http_reply reply = proxy.post("/", request.dump());
    CHECK(reply.status == 404);
    CHECK(reply.body == "not found: 42");
    CHECK(reply.header("content-type") == "text/plain; charset=utf-8");
    CHECK(reply.header("x-reason") == "missing");
    CHECK(reply.header("x-transaction") == "tx-7");
    CHECK(reply.header("x-action") == "/ns/status");
    CHECK(reply.header("access-control-allow-origin") == "*");
    check_error(proxy.post("/", json{{"init", init_of("x")}}.dump()), 500,
                "internal error during request processing.");
    // The line reaches the proxy's stderr file after the reply: waited for, not read at once.
    CHECK(wait_until(
        [&] {
            return proxy.stderr_text().find(
                       "Cannot initialize a runtime with a dedicated function.") !=
                   std::string::npos;
        },
        std::chrono::seconds(5)));
    // A given action_name wins over __OW_ACTION_NAME.
    const json named = {{"activation", {{"action_name", "/other/name"}}}};
    CHECK(proxy.post("/", named.dump()).header("x-action") == "/other/name");
}

TEST_CASE("knative: a dedicated zip (base64) and a failing dedicated source") {
    const std::string zip = make_zip({file_entry("exec", fixture_text("line.sh"), 0755)});
    proxy_process proxy(knative_plain({{"__OW_ACTION_CODE", base64_encode(zip)},
                                       {"__OW_ACTION_BINARY", "True"},
                                       {"__OW_ACTION_NAME", "lines"}}));
    // No activation: the value alone, and the name as action_name.
    check_page(proxy.post("/", "{\"value\":{\"a\":1}}"),
               "{\"value\":{\"a\":1},\"action_name\":\"lines\"}", JSON_UTF8);

    proxy_process broken(knative_cpp({{"__OW_ACTION_CODE", "this is not C++"}}));
    const http_reply first = broken.post("/", "{}");
    CHECK(first.status == 502);
    CHECK(json_of(first).contains("error"));
    CHECK(broken.post("/", "{}").status == 502);  // each request tries again
}

TEST_CASE("knative: activation fields and the body's strings reach the action (#! script)") {
    proxy_process proxy(knative_plain());
    const json request = {
        {"init", init_of(fixture_text("line.sh"), {{"name", "lines"}})},
        {"activation",
         {{"namespace", "ns"}, {"activation_id", "a-1"}, {"deadline", 1000000}, {"n", 1}}},
        {"transaction_id", "t-9"},
        {"value", {{"x", true}}}};
    const http_reply reply = proxy.post("/", request.dump());
    CHECK(reply.status == 200);
    const json line = json_of(reply);
    CHECK(line["namespace"] == "ns");
    CHECK(line["activation_id"] == "a-1");
    CHECK(line["transaction_id"] == "t-9");
    CHECK(line["action_name"] == "lines");
    CHECK_FALSE(line.contains("deadline"));
    CHECK_FALSE(line.contains("n"));
    CHECK(line["value"]["x"] == true);
    CHECK(line["value"]["__ow_method"] == "POST");
    CHECK(line["value"]["__ow_path"] == "");
    CHECK(line["value"]["__ow_user"] == "");
    CHECK(line["value"]["__ow_headers"]["content-type"] == "application/json");
    // Another media type: the body is not read, the request counts as {}.
    const http_reply text =
        proxy.raw(request_of("POST", "/", "Content-Type: text/plain\r\n", "{\"value\":{\"x\":1}}"));
    CHECK(text.status == 200);
    CHECK(text.body == "{\"value\":{},\"action_name\":\"lines\"}");
}

TEST_CASE("knative: after a failed init, another may succeed (stem cell)") {
    proxy_process proxy(knative_plain());
    const http_reply failed =
        proxy.post("/", json{{"init", init_of("not a script, no #! line")}}.dump());
    CHECK(failed.status == 502);
    CHECK(json_of(failed)["error"].get<std::string>().rfind("cannot start action", 0) == 0);
    check_error(proxy.post("/", "{}"), 403, "System not initialized.");
    CHECK_REPLY(proxy.post("/", json{{"init", init_of(fixture_text("line.sh"))}}.dump()), 200,
                "{\"ok\":true}");
    check_page(proxy.post("/", "{}"), "{\"value\":{}}", JSON_UTF8);
}

// The dedicated image's flow without the image: `proxy -compile` builds the zip once, its
// base64 goes in the file OW_ACTION_CODE_FILE names (a compiled action is larger than one
// environment variable may be), and the proxy starts with no compiler at all.
TEST_CASE("knative: a dedicated runtime from a zip built by proxy -compile (no compiler)") {
    temp_dir dir;
    env_map env = path_only_env();
    env["OW_COMPILER"] = compiler_script().string();
    const command_result built = run_command({ACTIONLOOP_PROXY_BIN, "-compile", "main"},
                                             cpp_source("web_page.cpp"), env, dir.path());
    REQUIRE_MESSAGE(built.exit_code == 0, built.err);
    const fs::path code = dir.path() / "code";
    write_file(code, base64_encode(built.out));
    CHECK(fs::file_size(code) > 131072);  // over Linux's limit for one environment string
    proxy_process proxy(knative_plain({{"OW_ACTION_CODE_FILE", code.string()},
                                       {"__OW_ACTION_BINARY", "true"},
                                       {"OW_WAIT_FOR_ACK", "1"}}));
    check_page(proxy.post("/", "{\"activation\":{},\"value\":{\"name\":\"Baked\"}}"),
               "<html><body><h3>hello Baked</h3></body></html>", "text/html; charset=utf-8");
    check_error(proxy.post("/", json{{"init", init_of("x")}}.dump()), 500,
                "internal error during request processing.");
}

TEST_CASE("knative: __OW_HTTP_METHODS restricts the methods") {
    proxy_process proxy(knative_plain({{"__OW_ACTION_CODE", fixture_text("line.sh")},
                                       {"__OW_HTTP_METHODS", "[GET, put, PATCH]"}}));
    check_error(proxy.post("/", "{}"), 500, "Bad request.");
    const http_reply got = proxy.get("/?q=1");
    check_page(got, "{\"value\":{}}", JSON_UTF8);
    const http_reply put = proxy.raw(
        request_of("PUT", "/", "Content-Type: application/json\r\n", "{\"value\":{\"p\":2}}"));
    CHECK(put.status == 200);
    CHECK(put.body == "{\"value\":{\"p\":2}}");
    const http_reply head = proxy.raw(request_of("HEAD", "/", "", ""));
    CHECK(head.status == 200);
    CHECK(head.body.empty());
    CHECK(head.header("content-length") == std::to_string(got.body.size()));
    check_error(proxy.raw(request_of("DELETE", "/", "", "")), 500, "Bad request.");
    CHECK(proxy.stderr_text().find("unknown method 'PATCH'") != std::string::npos);
}

TEST_CASE("knative: an empty page is 204, without a body or Content-Type") {
    proxy_process proxy(knative_plain());
    const json init = {{"init", init_of(fixture_text("answer.sh"))}};
    CHECK(proxy.post("/", init.dump()).status == 200);
    const http_reply text = proxy.raw(
        request_of("POST", "/", "Content-Type: text/plain\r\n", "{\"value\":{\"line\":\"x\"}}"));
    // {} as the envelope: the value {} has no .line, so the script answers null → 502.
    CHECK(text.status == 502);
    const http_reply empty = proxy.post("/", "{\"value\":{\"line\":\"{\\\"body\\\":\\\"\\\"}\"}}");
    CHECK(empty.status == 204);
    CHECK(empty.body.empty());
    CHECK_FALSE(empty.has_header("content-type"));
}

TEST_CASE("knative: a scalar value is refused before the action runs, null counts as {}") {
    // Issue 41, item 8: the same rule as classic mode's C++ launcher (cpp_actions_test.cpp).
    proxy_process proxy(knative_plain());
    REQUIRE(proxy.post("/", json{{"init", init_of(fixture_text("line.sh"))}}.dump()).status == 200);
    const std::vector<std::pair<json, std::string>> scalars = {
        {"s", "string"}, {42, "number"}, {true, "boolean"}, {-1.5, "number"}, {false, "boolean"}};
    for (const auto& [value, type] : scalars) {
        CAPTURE(value.dump());
        check_error(proxy.post("/", json{{"value", value}}.dump()), 403,
                    "Internal system error: the argument must be a dictionary but has type '" +
                        type + "'.");
    }
    const http_reply null_value = proxy.post("/", "{\"value\":null}");
    CHECK(null_value.status == 200);
    CHECK(json::parse(null_value.body) == json{{"value", json::object()}});
    CHECK(sentinel_count(proxy.stdout_text() + proxy.stderr_text()) == 0);
}

namespace {

// `runs` concurrent requests to the C++ log_ways fixture (one line per way of writing: 3 on
// stdout, 4 on stderr), each answered 200.
void run_log_ways(const proxy_process& proxy, int runs) {
    std::vector<std::future<http_reply>> replies;
    for (int n = 0; n < runs; ++n) {
        replies.push_back(std::async(std::launch::async, [&proxy, n] {
            return proxy.post("/", json{{"value", {{"n", n}}}}.dump());
        }));
    }
    for (auto& reply : replies) CHECK(reply.get().status == 200);
}

}  // namespace

// (No ';' in a test's name: CTest's discovery splits the name there.)
TEST_CASE("knative: plain log lines come without sentinels (nobody reads them in this mode), "
          "JSON records keep them") {
    constexpr int RUNS = 48;
    const std::string log_ways_zip = built_zip_code("tests/fixtures/log_ways.zip");
    {
        proxy_process proxy(knative_cpp());
        REQUIRE(proxy.post("/", json{{"init", init_of(log_ways_zip, {{"binary", true}})}}.dump())
                    .status == 200);
        run_log_ways(proxy, RUNS);
        // Every line arrives (3 ways on stdout, 4 on stderr), and no sentinel with them.
        REQUIRE(wait_until(
            [&] {
                return count_occurrences(proxy.stdout_text(), " printf\n") == RUNS &&
                       count_occurrences(proxy.stderr_text(), " fprintf\n") == RUNS &&
                       count_occurrences(proxy.stdout_text(), "\n") == 3 * RUNS &&
                       count_occurrences(proxy.stderr_text(), "\n") == 4 * RUNS;
            },
            std::chrono::seconds(10)));
        CHECK(sentinel_count(proxy.stdout_text() + proxy.stderr_text()) == 0);
    }
    {
        proxy_process proxy(knative_cpp({{"OW_LOG_FORMAT", "json"}}));
        REQUIRE(proxy.post("/", json{{"init", init_of(log_ways_zip, {{"binary", true}})}}.dump())
                    .status == 200);
        run_log_ways(proxy, RUNS);
        proxy.wait_for_sentinels(RUNS, std::chrono::seconds(10));
        CHECK(sentinel_count(proxy.stdout_text()) == RUNS);
        CHECK(sentinel_count(proxy.stderr_text()) == RUNS);
    }
}
