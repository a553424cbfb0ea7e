// lambda/invocation: the request line the action reads for an invocation, and what is posted
// back for each way an activation ends.
#include "lambda/invocation.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace {

using namespace actionloop;
using namespace actionloop::lambda;
using nlohmann::json;

invocation sample() {
    invocation inv;
    inv.request_id = "8476a536-e9f4-11e8-9739-2dfe598c3fcd";
    inv.deadline_ms = "1542409706888";
    inv.function_arn = "arn:aws:lambda:us-east-2:123456789012:function:custom-runtime";
    inv.trace_id = "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=1";
    inv.event = R"({"key":"value"})";
    return inv;
}

activation_result answered(std::string line) {
    activation_result r;
    r.outcome = executor::outcome::answered;
    r.line = std::move(line);
    return r;
}

}  // namespace

TEST_CASE("lambda: the request line carries the event as value and the context fields") {
    invocation inv = sample();
    inv.client_context = R"({"client":{"app_title":"a \"b\""}})";
    inv.cognito_identity = R"({"cognitoIdentityId":"id"})";
    const json line = json::parse(request_line(inv));
    CHECK(line["value"] == json{{"key", "value"}});
    CHECK(line["activation_id"] == inv.request_id);
    CHECK(line["action_name"] == inv.function_arn);
    CHECK(line["deadline"] == "1542409706888");
    CHECK(line["lambda_trace_id"] == inv.trace_id);
    CHECK(line["lambda_client_context"] == inv.client_context);
    CHECK(line["lambda_cognito_identity"] == inv.cognito_identity);
}

TEST_CASE("lambda: events of every JSON type go to the action as they are, an empty one as {}") {
    for (const char* event : {R"("text")", "42", "-1.5e3", "true", "null", "[1,{\"a\":2}]"}) {
        invocation inv = sample();
        inv.event = event;
        CHECK(json::parse(request_line(inv))["value"] == json::parse(event));
    }
    invocation empty = sample();
    empty.event = " \n";
    CHECK(json::parse(request_line(empty))["value"] == json::object());
}

TEST_CASE("lambda: absent headers are absent fields, a deadline that is not a number is left out") {
    invocation inv;
    inv.request_id = "r1";
    inv.deadline_ms = "soon";
    inv.event = "{}";
    const json line = json::parse(request_line(inv));
    CHECK(line.size() == 2);  // value and activation_id only
    CHECK_FALSE(deadline_of(inv).has_value());
    inv.deadline_ms = "1542409706888";
    CHECK(deadline_of(inv) == 1542409706888LL);
}

TEST_CASE(
    "lambda: an event that is not JSON, or past the JSON bounds, is refused before the action") {
    const json_limits limits{4, 100};
    CHECK_FALSE(event_problem(R"({"a":[1,2]})", limits).has_value());
    CHECK_FALSE(event_problem("", limits).has_value());
    CHECK(event_problem(R"({"a":1)", limits) == "The event is not JSON.");
    // A value and a member smuggled after it would be a second field of the line.
    CHECK(event_problem(R"(1,"activation_id":"x")", limits) == "The event is not JSON.");
    // Found by fuzz_lambda: the parser stops at a NUL, so what follows one went unchecked.
    CHECK(event_problem(std::string_view("{}\0\"a\":1}", 10), limits) == "The event is not JSON.");
    CHECK(event_problem(std::string_view("\"t\"\0", 4), limits) == "The event is not JSON.");
    const auto deep = event_problem("[[[[[1]]]]]", limits);
    REQUIRE(deep.has_value());
    CHECK(deep->find("nests deeper than 4 levels") != std::string::npos);
    const std::string nested_300k = std::string(300000, '[') + std::string(300000, ']');
    CHECK(event_problem(nested_300k, json_limits{}).has_value());
}

TEST_CASE("lambda: request ids that may go into a path") {
    CHECK(usable_request_id("8476a536-e9f4-11e8-9739-2dfe598c3fcd"));
    CHECK(usable_request_id("a.b_c"));
    CHECK_FALSE(usable_request_id(""));
    CHECK_FALSE(usable_request_id("../../runtime/init/error"));
    CHECK_FALSE(usable_request_id("a b"));
    CHECK_FALSE(usable_request_id(std::string(129, 'a')));
}

TEST_CASE("lambda: an answer is posted to /response as it is, any JSON, its newline cut") {
    for (const char* line : {"{\"greeting\":\"hi\"}\n", "\"text\"\n", "3\n", "null\n",
                             "{\"error\":\"a returned error is a response on Lambda\"}\n"}) {
        const post p = result_post(sample(), answered(line), 1000);
        CHECK(p.target ==
              "/2018-06-01/runtime/invocation/8476a536-e9f4-11e8-9739-2dfe598c3fcd/response");
        CHECK(p.body + "\n" == line);
        CHECK(p.error_type.empty());
    }
}

TEST_CASE("lambda: the launcher's error line is posted to /error with its type") {
    const post p = result_post(
        sample(),
        answered(
            R"({"__lambda_error":{"errorMessage":"boom","errorType":"std::runtime_error","stackTrace":[]}})"
            "\n"),
        1000);
    CHECK(p.target == "/2018-06-01/runtime/invocation/8476a536-e9f4-11e8-9739-2dfe598c3fcd/error");
    CHECK(json::parse(p.body) == json{{"errorMessage", "boom"},
                                      {"errorType", "std::runtime_error"},
                                      {"stackTrace", json::array()}});
    CHECK(p.error_type == "std::runtime_error");
    // An answer that only starts alike is an answer.
    const post other = result_post(sample(),
                                   answered(R"({"__lambda_error":1,"x":2})"
                                            "\n"),
                                   1000);
    CHECK(other.error_type.empty());
}

TEST_CASE("lambda: a crash is Runtime.ExitError with the stderr tail as the stack trace") {
    activation_result r;
    r.outcome = executor::outcome::exited;
    r.crash = "killed by signal 11 (SIGSEGV)";
    r.stderr_tail = "actionloop: crash\n#0 0x1 in boom() at a.cpp:3\n\n#1 0x2 in main\n";
    const post p = result_post(sample(), r, 1000);
    const json body = json::parse(p.body);
    CHECK(p.error_type == "Runtime.ExitError");
    CHECK(body["errorType"] == "Runtime.ExitError");
    CHECK(body["errorMessage"] ==
          "RequestId: 8476a536-e9f4-11e8-9739-2dfe598c3fcd Error: Runtime exited with error: "
          "killed by signal 11 (SIGSEGV)");
    CHECK(body["stackTrace"] ==
          json{"actionloop: crash", "#0 0x1 in boom() at a.cpp:3", "#1 0x2 in main"});
}

TEST_CASE("lambda: a missed deadline, an answer too large, a start that failed") {
    activation_result late;
    late.outcome = executor::outcome::deadline;
    CHECK(result_post(sample(), late, 1000).error_type == "Sandbox.Timedout");
    activation_result big;
    big.outcome = executor::outcome::too_large;
    const post p = result_post(sample(), big, 1000);
    CHECK(p.error_type == "Function.ResponseSizeTooLarge");
    CHECK(json::parse(p.body)["errorMessage"].get<std::string>().find("1000 bytes") !=
          std::string::npos);
    activation_result dead;
    dead.outcome = executor::outcome::exited;
    dead.start_failure = "exec format error";
    CHECK(
        json::parse(result_post(sample(), dead, 1000).body)["errorMessage"].get<std::string>().find(
            "cannot start the action again: exec format error") != std::string::npos);
}

TEST_CASE("lambda: the init error, its text escaped, invalid UTF-8 replaced") {
    const post p = init_error_post("on_init: \"quoted\"\nand \xff", "line 1\nline 2\n");
    CHECK(p.target == "/2018-06-01/runtime/init/error");
    CHECK(p.error_type == "Runtime.InitError");
    const json body = json::parse(p.body);
    CHECK(body["errorMessage"] == "on_init: \"quoted\"\nand \xef\xbf\xbd");
    CHECK(body["stackTrace"] == json{"line 1", "line 2"});
}
