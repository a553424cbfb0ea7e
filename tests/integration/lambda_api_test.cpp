// The real `lambda-api` binary over HTTP, as a runtime and a caller see it: a /next answered
// by an invoke, response and error round trips, 400 for an unknown or answered id, 410 for a
// late answer, Managed-Instances mode's N parked /next and its refusals, the invocation-id
// echo, an init error, a client that leaves while parked, and its flags.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <regex>
#include <string>
#include <vector>

#include "expectations.hpp"
#include "lambda_api_process.hpp"

using namespace support;
using namespace std::chrono_literals;

namespace {

bool is_uuid(const std::string& text) {
    static const std::regex UUID(
        "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
    return std::regex_match(text, UUID);
}

// A GET /next on its own thread: it parks until an invoke comes.
std::future<http_reply> park(const lambda_api_process& api) {
    return std::async(std::launch::async, [&api] { return api.next(); });
}

// An invoke on its own thread: it waits for the runtime's answer.
std::future<http_reply> invoke_async(const lambda_api_process& api, const std::string& event,
                                     const header_map& headers = {}) {
    return std::async(std::launch::async,
                      [&api, event, headers] { return api.invoke(event, headers); });
}

bool parked(const lambda_api_process& api, int n) {
    return api.wait_for([n](const nlohmann::json& s) { return s.at("parked") == n; });
}

std::string error_type(const http_reply& reply) {
    return json_of(reply).value("errorType", std::string("(none)"));
}

// A /next that parks, then an invoke that it gets: the event's reply, the invoke in flight.
struct delivered {
    http_reply event;
    std::future<http_reply> answer;
    std::string id() const { return event.header("lambda-runtime-aws-request-id"); }
};

delivered deliver(const lambda_api_process& api, const std::string& body = "{}",
                  const header_map& headers = {}) {
    auto next = park(api);
    REQUIRE(parked(api, 1));
    delivered d{{}, invoke_async(api, body, headers)};
    d.event = next.get();
    REQUIRE(d.event.status == 200);
    return d;
}

}  // namespace

TEST_CASE("lambda-api: a parked /next gets the invoke's event with Lambda's headers, and the "
          "runtime's response is the invoke's answer") {
    lambda_api_process api({"-function-name", "hello", "-timeout", "7"});
    auto next = park(api);
    REQUIRE(parked(api, 1));
    const long long before = epoch_millis();
    // {"custom":{"k":"v"}} in base64, as the AWS CLI sends --client-context.
    auto answer = invoke_async(api, R"({"name":"Ann"})",
                               {{"X-Amz-Client-Context", "eyJjdXN0b20iOnsiayI6InYifX0="},
                                {"X-Amz-Cognito-Identity", R"({"cognitoIdentityId":"c1"})"}});
    const http_reply event = next.get();
    const long long after = epoch_millis();
    CHECK(event.status == 200);
    CHECK(event.body == R"({"name":"Ann"})");
    CHECK(event.header("content-type") == "application/json");
    const std::string id = event.header("lambda-runtime-aws-request-id");
    CHECK(is_uuid(id));
    const long long deadline = std::stoll(event.header("lambda-runtime-deadline-ms"));
    CHECK(deadline >= before + 7000);
    CHECK(deadline <= after + 7000);
    CHECK(event.header("lambda-runtime-invoked-function-arn") ==
          "arn:aws:lambda:us-east-1:012345678912:function:hello");
    CHECK(std::regex_match(event.header("lambda-runtime-trace-id"),
                           std::regex("Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};"
                                      "Sampled=1")));
    CHECK(event.header("lambda-runtime-client-context") == R"({"custom":{"k":"v"}})");
    CHECK(event.header("lambda-runtime-cognito-identity") == R"({"cognitoIdentityId":"c1"})");
    CHECK_FALSE(event.has_header("lambda-runtime-invocation-id"));

    const http_reply taken = api.respond(id, R"({"greeting":"Hello, Ann!"})");
    CHECK(taken.status == 202);
    CHECK(taken.body == "{\"status\":\"OK\"}\n");
    const http_reply result = answer.get();
    CHECK(result.status == 200);
    CHECK(result.body == R"({"greeting":"Hello, Ann!"})");
    CHECK(result.header("x-amzn-requestid") == id);
    CHECK_FALSE(result.has_header("x-amz-function-error"));
    const nlohmann::json s = api.stats();
    CHECK(s.at("invokes") == 1);
    CHECK(s.at("delivered") == 1);
    CHECK(s.at("responses") == 1);
    CHECK(s.at("in_flight") == 0);
}

TEST_CASE("lambda-api: the invoke's own trace header goes to the runtime as it is") {
    lambda_api_process api;
    const std::string trace =
        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    delivered d = deliver(api, "{}", {{"X-Amzn-Trace-Id", trace}});
    CHECK(d.event.header("lambda-runtime-trace-id") == trace);
    CHECK(api.respond(d.id(), "null").status == 202);
    CHECK(d.answer.get().body == "null");
}

TEST_CASE("lambda-api: an invoke before any /next waits for one (classic mode)") {
    lambda_api_process api;
    auto answer = invoke_async(api, "[1,2,3]");
    REQUIRE(api.wait_for([](const nlohmann::json& s) { return s.at("queued") == 1; }));
    const http_reply event = api.next();
    CHECK(event.body == "[1,2,3]");
    CHECK(api.respond(event.header("lambda-runtime-aws-request-id"), "6").status == 202);
    CHECK(answer.get().body == "6");
}

TEST_CASE("lambda-api: an error post is the invoke's 200 with X-Amz-Function-Error: Unhandled") {
    lambda_api_process api;
    delivered d = deliver(api);
    const std::string error =
        R"({"errorMessage":"boom","errorType":"std::runtime_error","stackTrace":[]})";
    const http_reply taken =
        api.fail(d.id(), error, {{"Lambda-Runtime-Function-Error-Type", "std::runtime_error"}});
    CHECK(taken.status == 202);
    CHECK(taken.body == "{\"status\":\"OK\"}\n");
    const http_reply result = d.answer.get();
    CHECK(result.status == 200);
    CHECK(result.body == error);
    CHECK(result.header("x-amz-function-error") == "Unhandled");
    CHECK(api.stats().at("errors") == 1);
}

TEST_CASE("lambda-api: a post for an unknown id, or a second post, is 400 InvalidRequestID") {
    lambda_api_process api;
    const http_reply unknown = api.respond("no-such-id", "{}");
    CHECK(unknown.status == 400);
    CHECK(unknown.header("content-type") == "application/json");
    CHECK(unknown.body ==
          "{\"errorMessage\":\"Invalid request ID: 'no-such-id' is not an invocation handed out "
          "by /next (or it was forgotten)\",\"errorType\":\"InvalidRequestID\"}\n");
    delivered d = deliver(api);
    CHECK(api.respond(d.id(), "1").status == 202);
    const http_reply again = api.respond(d.id(), "2");
    CHECK(again.status == 400);
    CHECK(error_type(again) == "InvalidRequestID");
    CHECK(api.fail(d.id(), "{}").status == 400);
    CHECK(d.answer.get().body == "1");
    const nlohmann::json s = api.stats();
    CHECK(s.at("unknown_ids") == 1);
    CHECK(s.at("repeated_posts") == 2);
    CHECK(contains(api.stderr_text(), "400 {\"errorMessage\":\"Invalid request ID"));
}

TEST_CASE("lambda-api: past the deadline the invoke gets the timeout, and a late post 410") {
    lambda_api_process api({"-timeout", "0.3"});
    delivered d = deliver(api);
    const auto start = std::chrono::steady_clock::now();
    const http_reply timeout = d.answer.get();
    CHECK(std::chrono::steady_clock::now() - start < 3s);
    CHECK(timeout.status == 200);
    CHECK(timeout.header("x-amz-function-error") == "Unhandled");
    CHECK(timeout.body == "{\"errorMessage\":\"RequestId: " + d.id() +
                              " Error: Task timed out after 0.30 seconds\",\"errorType\":"
                              "\"Sandbox.Timedout\"}\n");
    const http_reply late = api.respond(d.id(), "{}");
    CHECK(late.status == 410);
    CHECK(error_type(late) == "InvokeTimeout");
    CHECK(api.fail(d.id(), "{}").status == 400);  // the 410 is given once
    const nlohmann::json s = api.stats();
    CHECK(s.at("timeouts") == 1);
    CHECK(s.at("late_posts") == 1);
}

TEST_CASE("lambda-api: Managed Instances: N /next park and the N+1st is refused at once") {
    lambda_api_process api({"-max-concurrency", "3"});
    std::vector<std::future<http_reply>> runtimes;
    runtimes.reserve(3);
    for (int i = 0; i < 3; ++i) runtimes.push_back(park(api));
    REQUIRE(parked(api, 3));
    const http_reply refused = api.next(5s);
    CHECK(refused.status == 500);
    CHECK(refused.body ==
          "{\"errorMessage\":\"3 GET /2018-06-01/runtime/invocation/next are parked already, as "
          "many as -max-concurrency 3 allows\",\"errorType\":\"Runtime.TooManyIdleRuntimes\"}\n");
    // Three invokes at once, one to each parked /next, each answered on its own.
    std::vector<std::future<http_reply>> invokes;
    invokes.reserve(3);
    for (int i = 0; i < 3; ++i) invokes.push_back(invoke_async(api, std::to_string(i)));
    std::vector<http_reply> events;
    events.reserve(3);
    for (auto& runtime : runtimes) events.push_back(runtime.get());  // all three in flight
    for (const http_reply& event : events) {
        REQUIRE(event.status == 200);
        CHECK(api.respond(event.header("lambda-runtime-aws-request-id"), "\"" + event.body + "\"")
                  .status == 202);
    }
    for (int i = 0; i < 3; ++i) CHECK(invokes[i].get().body == "\"" + std::to_string(i) + "\"");
    const nlohmann::json s = api.stats();
    CHECK(s.at("parked_peak") == 3);
    CHECK(s.at("refused_next") == 1);
    CHECK(s.at("in_flight_peak") == 3);
    CHECK(s.at("refused_invokes") == 0);
}

TEST_CASE("lambda-api: Managed Instances: an invoke with no /next parked fails at once") {
    lambda_api_process api({"-max-concurrency", "2"});
    const http_reply refused = api.invoke("{}", {}, 5s);
    CHECK(refused.status == 400);
    CHECK(refused.header("error-type") == "Runtime.Unavailable");
    CHECK(error_type(refused) == "Runtime.Unavailable");
    // Never queued: a /next that comes after parks.
    auto next = park(api);
    REQUIRE(parked(api, 1));
    const nlohmann::json s = api.stats();
    CHECK(s.at("refused_invokes") == 1);
    CHECK(s.at("queued_peak") == 0);
    auto answer = invoke_async(api, "{}");
    CHECK(api.respond(next.get().header("lambda-runtime-aws-request-id"), "{}").status == 202);
    CHECK(answer.get().status == 200);
}

TEST_CASE("lambda-api: with -invocation-id, /next sends one and the echo is checked") {
    lambda_api_process api({"-invocation-id"});
    delivered echoed = deliver(api);
    const std::string inv = echoed.event.header("lambda-runtime-invocation-id");
    CHECK(is_uuid(inv));
    CHECK(inv != echoed.id());
    CHECK(api.respond(echoed.id(), "1", {{"Lambda-Runtime-Invocation-Id", inv}}).status == 202);
    CHECK(echoed.answer.get().body == "1");

    delivered other = deliver(api);
    const http_reply wrong =
        api.respond(other.id(), "2", {{"Lambda-Runtime-Invocation-Id", inv}});  // the first's
    CHECK(wrong.status == 400);
    CHECK(error_type(wrong) == "InvalidRequestID");
    CHECK(api.respond(other.id(), "3").status == 202);  // no echo: taken, counted
    CHECK(other.answer.get().body == "3");
    const nlohmann::json s = api.stats();
    CHECK(s.at("echo_ok") == 1);
    CHECK(s.at("echo_wrong") == 1);
    CHECK(s.at("echo_missing") == 1);
}

TEST_CASE("lambda-api: an init error fails the invokes until a runtime polls again") {
    lambda_api_process api;
    const std::string error = R"({"errorMessage":"no config","errorType":"Runtime.InitError"})";
    const http_reply taken =
        api.init_error(error, {{"Lambda-Runtime-Function-Error-Type", "Runtime.InitError"}});
    CHECK(taken.status == 202);
    CHECK(taken.body == "{\"status\":\"OK\"}\n");
    const http_reply failed = api.invoke("{}", {}, 5s);
    CHECK(failed.status == 200);
    CHECK(failed.body == error);
    CHECK(failed.header("x-amz-function-error") == "Unhandled");
    nlohmann::json s = api.stats();
    CHECK(s.at("init_errors") == 1);
    CHECK(s.at("init_failed_invokes") == 1);
    CHECK(s.at("init_failed") == true);
    delivered d = deliver(api);  // a new runtime
    CHECK(api.respond(d.id(), "{}").status == 202);
    CHECK(d.answer.get().status == 200);
    CHECK(api.stats().at("init_failed") == false);
}

TEST_CASE("lambda-api: a parked /next whose client left is dropped, its place freed") {
    lambda_api_process api({"-max-concurrency", "1"});
    const int fd = connect_to(api.port());
    send_text(fd, "GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: x\r\n\r\n");
    REQUIRE(parked(api, 1));
    ::close(fd);
    REQUIRE(api.wait_for(
        [](const nlohmann::json& s) { return s.at("parked") == 0 && s.at("gone_next") == 1; }));
    // Nobody is parked: the invoke is refused rather than lost to the dead poller; a new /next
    // takes the freed place.
    CHECK(api.invoke("{}", {}, 5s).status == 400);
    delivered d = deliver(api);
    CHECK(api.respond(d.id(), "{}").status == 202);
    CHECK(d.answer.get().status == 200);
    CHECK(api.running());
}

TEST_CASE("lambda-api: a queued invoke whose client left is not given to a runtime") {
    lambda_api_process api;
    const int fd = connect_to(api.port());
    send_text(fd, "POST /2015-03-31/functions/function/invocations HTTP/1.1\r\nHost: x\r\n"
                  "Content-Length: 6\r\n\r\n\"gone\"");
    REQUIRE(api.wait_for([](const nlohmann::json& s) { return s.at("queued") == 1; }));
    ::close(fd);
    REQUIRE(api.wait_for([](const nlohmann::json& s) { return s.at("gone_invokes") == 1; }));
    delivered d = deliver(api, "\"here\"");
    CHECK(d.event.body == "\"here\"");
    CHECK(api.respond(d.id(), "{}").status == 202);
}

TEST_CASE("lambda-api: bodies past -max-body-bytes get 413 in Lambda's shape, and an "
          "oversized answer fails its invoke") {
    lambda_api_process api({"-max-body-bytes", "100"});
    const http_reply big = api.invoke(std::string(101, ' '), {}, 5s);
    CHECK(big.status == 413);
    CHECK(big.body == "{\"errorMessage\":\"Exceeded maximum allowed payload size (100 bytes, "
                      "-max-body-bytes).\",\"errorType\":\"RequestEntityTooLarge\"}\n");
    delivered d = deliver(api);
    CHECK(api.respond(d.id(), "\"" + std::string(200, 'x') + "\"").status == 413);
    const http_reply failed = d.answer.get();
    CHECK(failed.header("x-amz-function-error") == "Unhandled");
    CHECK(error_type(failed) == "Function.ResponseSizeTooLarge");
    CHECK(api.stats().at("too_large") == 2);
}

TEST_CASE("lambda-api: another path is 404 and another method 405, in Lambda's error shape") {
    lambda_api_process api;
    const http_reply missing = http_get(api.port(), "/2018-06-01/nothing");
    CHECK(missing.status == 404);
    CHECK(error_type(missing) == "NotFound");
    const http_reply wrong = http_post(api.port(), "/2018-06-01/runtime/invocation/next", "{}");
    CHECK(wrong.status == 405);
    CHECK(wrong.header("allow") == "GET");
    CHECK(error_type(wrong) == "MethodNotAllowed");
}

TEST_CASE("lambda-api: a bad flag exits 2 naming it, a taken port exits 1 saying so") {
    const command_result bad = run_lambda_api({"-max-concurrency", "x"});
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "invalid -max-concurrency 'x': a whole number from 0 to 4096"));
    CHECK(contains(bad.err, "usage: lambda-api"));
    const command_result help = run_lambda_api({"-h"});
    CHECK(help.exit_code == 0);
    CHECK(contains(help.out, "-max-concurrency N"));
    lambda_api_process api;
    const command_result taken = run_lambda_api({"-port", std::to_string(api.port())});
    CHECK(taken.exit_code == 1);
    CHECK(contains(taken.err, "cannot listen on 127.0.0.1:" + std::to_string(api.port())));
}

TEST_CASE("lambda-api: SIGTERM stops it with status 0") {
    lambda_api_process api;
    auto next = park(api);
    REQUIRE(parked(api, 1));
    const int status = api.stop();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(next.get().status == -1);  // the parked /next's connection ended with it
}
