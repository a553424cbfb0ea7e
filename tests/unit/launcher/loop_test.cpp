// One request line to one answer line (launcher/src/loop.hpp), in Lambda mode: the event of
// any JSON type is the argument, any JSON answer is the answer, and every failure is the one
// {"__lambda_error": …} line with the exception's dynamic type; OpenWhisk mode as before.
#include <doctest/doctest.h>

#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "loop.hpp"

using namespace actionloop;
using nlohmann::json;

namespace {

// What the launcher prints on std::cerr while alive.
class captured_cerr {
public:
    captured_cerr() : saved_(std::cerr.rdbuf(text_.rdbuf())) {}
    ~captured_cerr() { std::cerr.rdbuf(saved_); }
    captured_cerr(const captured_cerr&) = delete;
    captured_cerr& operator=(const captured_cerr&) = delete;
    std::string text() const { return text_.str(); }

private:
    std::ostringstream text_;
    std::streambuf* saved_;
};

std::string error_line(const std::string& message, const std::string& type) {
    return R"({"__lambda_error":{"errorMessage":)" + json(message).dump() + R"(,"errorType":)" +
           json(type).dump() + R"(,"stackTrace":[]}})";
}

// An action that answers with what it got: {"args":…,"type":…}.
json echo_args(json&& args, const context&) {
    return {{"args", args}, {"type", std::string(args.type_name())}};
}

// An action whose argument says what to throw, or what to answer.
json thrower(json&& args, const context&) {
    const std::string what = args.is_string() ? args.get<std::string>() : "";
    if (what == "runtime_error") throw std::runtime_error("it \"broke\"\nhere");
    if (what == "out_of_range") return std::vector<int>().at(3);
    if (what == "type_error") return args.get<int>();
    if (what == "int") throw 42;
    if (what == "bad_alloc") throw std::bad_alloc();
    if (what == "error_member") return {{"error", "mine"}};
    return args;
}

std::string lambda(const std::string& line, const entry_point& entry) {
    return handle_request(line, entry, platform::lambda);
}

std::string raw_lambda(const std::string& line, const raw_entry_point& entry) {
    std::string answer;
    handle_raw_request(line, entry, answer, platform::lambda);
    return answer;
}

}  // namespace

TEST_CASE("launcher lambda: the event is args whatever its JSON type, absent is {}") {
    const std::vector<std::pair<std::string, std::string>> events = {
        {R"("hello")", R"({"args":"hello","type":"string"})"},
        {"42", R"({"args":42,"type":"number"})"},
        {"-1.5e3", R"({"args":-1500.0,"type":"number"})"},
        {"true", R"({"args":true,"type":"boolean"})"},
        {"null", R"({"args":null,"type":"null"})"},
        {"[1,\"a\"]", R"({"args":[1,"a"],"type":"array"})"},
        {R"({"k":"v"})", R"({"args":{"k":"v"},"type":"object"})"},
    };
    for (const auto& [value, answer] : events) {
        CHECK(lambda(R"({"activation_id":"r1","value":)" + value + "}", echo_args) == answer);
    }
    CHECK(lambda(R"({"activation_id":"r1"})", echo_args) == R"({"args":{},"type":"object"})");
}

TEST_CASE("launcher lambda: any JSON answer is the answer, an error member included") {
    CHECK(lambda(R"({"value":7})", thrower) == "7");
    CHECK(lambda(R"({"value":"text"})", thrower) == R"("text")");
    CHECK(lambda(R"({"value":null})", thrower) == "null");
    CHECK(lambda(R"({"value":[]})", thrower) == "[]");
    CHECK(lambda(R"({"value":"error_member"})", thrower) == R"({"error":"mine"})");
}

TEST_CASE("launcher lambda: an exception is the __lambda_error line with its dynamic type") {
    captured_cerr err;
    CHECK(lambda(R"({"value":"runtime_error"})", thrower) ==
          R"({"__lambda_error":{"errorMessage":"it \"broke\"\nhere",)"
          R"("errorType":"std::runtime_error","stackTrace":[]}})");
    CHECK(lambda(R"({"value":"out_of_range"})", thrower) ==
          error_line("vector::_M_range_check: __n (which is 3) >= this->size() (which is 0)",
                     "std::out_of_range"));
    CHECK(lambda(R"({"value":"type_error"})", thrower) ==
          error_line("[json.exception.type_error.302] type must be number, but is string",
                     "nlohmann::json_abi_v3_11_2::detail::type_error"));
    CHECK(lambda(R"({"value":"int"})", thrower) == error_line("unknown exception", "Unknown"));
    CHECK(lambda(R"({"value":"bad_alloc"})", thrower) ==
          error_line("out of memory: the action could not allocate memory (std::bad_alloc)",
                     "std::bad_alloc"));
    // On stderr as in OpenWhisk mode.
    CHECK(err.text() == "action error: it \"broke\"\nhere\n"
                        "action error: vector::_M_range_check: __n (which is 3) >= this->size() "
                        "(which is 0)\n"
                        "action error: [json.exception.type_error.302] type must be number, but "
                        "is string\n"
                        "action error: unknown exception\n"
                        "action error: out of memory: the action could not allocate memory "
                        "(std::bad_alloc)\n");
}

TEST_CASE("launcher lambda: a request line that cannot be read is a Runtime.UnmarshalError") {
    captured_cerr err;
    const std::string line = lambda("{\"value\":", echo_args);
    CHECK(json::parse(line)["__lambda_error"]["errorType"] == "Runtime.UnmarshalError");
    CHECK(json::parse(line)["__lambda_error"]["errorMessage"].get<std::string>().rfind(
              "invalid request: [json.exception.parse_error.101]", 0) == 0);
    CHECK(lambda("{\"value\":" + std::string(600, '[') + std::string(600, ']') + "}", echo_args) ==
          error_line("invalid request: the request nests deeper than 512 levels "
                     "(OW_MAX_JSON_DEPTH)",
                     "Runtime.UnmarshalError"));
    std::string raw;
    handle_raw_request(
        "{\"value\":", [](std::string_view, std::string& answer, const context&) { answer = "{}"; },
        raw, platform::lambda);
    CHECK(raw == error_line("invalid request: not a JSON object", "Runtime.UnmarshalError"));
}

TEST_CASE("launcher lambda: the raw entry point gets the event's text as it is") {
    const raw_entry_point echo_text = [](std::string_view value, std::string& answer,
                                         const context&) {
        answer = json(std::string(value)).dump();
    };
    CHECK(raw_lambda(R"({"value":"hello"})", echo_text) == R"("\"hello\"")");
    CHECK(raw_lambda(R"({"value":42})", echo_text) == R"("42")");
    CHECK(raw_lambda(R"({"value":null})", echo_text) == R"("null")");
    CHECK(raw_lambda(R"({"value":false})", echo_text) == R"("false")");
    CHECK(raw_lambda(R"({"value":[1, 2]})", echo_text) == R"("[1, 2]")");
    CHECK(raw_lambda(R"({"value":"__ow_headers"})", echo_text) == R"("\"__ow_headers\"")");
    CHECK(raw_lambda(R"({"activation_id":"r"})", echo_text) == R"("{}")");
    // Its answer is any JSON, its exceptions are errors as in the json path.
    CHECK(raw_lambda(R"({"value":1})", [](std::string_view, std::string& answer, const context&) {
              answer = "3.5";
          }) == "3.5");
    captured_cerr err;
    CHECK(raw_lambda(R"({"value":1})", [](std::string_view value, std::string&, const context&) {
              throw std::out_of_range(std::string(value));
          }) == error_line("1", "std::out_of_range"));
    CHECK(raw_lambda(R"({"value":1})", [](std::string_view, std::string&, const context&) {
              throw "a string literal";
          }) == error_line("unknown exception", "Unknown"));
    CHECK(raw_lambda(R"({"value":1})", [](std::string_view, std::string&, const context&) {}) ==
          error_line("the action gave an empty answer", "std::runtime_error"));
}

TEST_CASE("launcher lambda: the context has Lambda's fields in both paths") {
    const std::string line =
        R"({"value":"e","activation_id":"req-1","action_name":"arn:f",)"
        R"("lambda_trace_id":"Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1",)"
        R"("lambda_client_context":"{\"custom\":{\"k\":\"v\"}}",)"
        R"("lambda_cognito_identity":"{\"cognitoIdentityId\":\"c\"}"})";
    const auto fields = [](const context& ctx) {
        return json{{"id", ctx.activation_id()},
                    {"arn", ctx.action_name()},
                    {"trace", ctx.lambda_trace_id()},
                    {"client", ctx.client_context()},
                    {"cognito", ctx.cognito_identity()},
                    {"trace_id", ctx.traceparent().substr(3, 32)},
                    {"flags", ctx.traceparent().substr(53)},
                    {"current", context().activation_id()}};
    };
    const json expected = {{"id", "req-1"},
                           {"arn", "arn:f"},
                           {"trace", "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"},
                           {"client", R"({"custom":{"k":"v"}})"},
                           {"cognito", R"({"cognitoIdentityId":"c"})"},
                           {"trace_id", "5759e988bd862e3fe1be46a994272793"},
                           {"flags", "01"},
                           {"current", "req-1"}};
    CHECK(json::parse(lambda(line, [&](json&&, const context& ctx) { return fields(ctx); })) ==
          expected);
    CHECK(json::parse(raw_lambda(line, [&](std::string_view, std::string& answer,
                                           const context& ctx) { answer = fields(ctx).dump(); })) ==
          expected);
    ::unsetenv("_X_AMZN_TRACE_ID");
}

TEST_CASE("launcher lambda: OpenWhisk mode is as before (scalars refused, {\"error\"} answers)") {
    captured_cerr err;
    CHECK(
        handle_request(R"({"value":"runtime_error"})", thrower) ==
        R"({"error":"invalid request: the argument must be a dictionary but has type 'string'"})");
    CHECK(handle_request(R"({"value":null})", echo_args) == R"({"args":{},"type":"object"})");
    CHECK(handle_request(R"({"value":{"a":1}})", [](json&&, const context&) -> json {
              throw std::out_of_range("x");
          }) == R"({"error":"x"})");
    CHECK(handle_request(R"({"value":{}})", [](json&&, const context&) -> json { throw 1; }) ==
          R"({"error":"unknown exception"})");
    CHECK(handle_request("{\"value\":", echo_args)
              .rfind(R"({"error":"invalid request: [json.exception.parse_error.101])", 0) == 0);
    std::string raw;
    handle_raw_request(R"({"value":7})",
                       [](std::string_view, std::string& answer, const context&) { answer = "{}"; },
                       raw);
    CHECK(
        raw ==
        R"({"error":"invalid request: the argument must be a dictionary but has type 'number'"})");
}
