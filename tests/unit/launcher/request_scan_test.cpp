// The request line's fast path (launcher/src/request_scan.hpp): the lines the platforms send
// are read without a DOM of the whole line, every other line is left to the DOM, and both
// paths give the same members, argument, context and answers.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "loop.hpp"
#include "request_scan.hpp"

using namespace actionloop;
using nlohmann::json;

namespace {

// A line as the proxy writes it to the action (docs/protocol.md).
const std::string PLATFORM_LINE =
    R"({"value":{"name":"Mike","n":[1,2.5,"é"]},"namespace":"guest",)"
    R"("action_name":"/guest/hello","action_version":"0.0.1",)"
    R"("api_host":"https://openwhisk.example","activation_id":"0123456789abcdef0123456789abcdef",)"
    R"("transaction_id":"tid-7","deadline":"4102444800000","proxy_deadline":"4102444800000"})";

// What the DOM makes of `line`'s members other than `value`, in its order.
std::vector<std::pair<std::string, json>> dom_members(const std::string& line) {
    std::vector<std::pair<std::string, json>> members;
    const json dom = json::parse(line);
    for (const auto& [key, value] : dom.items()) {
        if (key != "value") members.emplace_back(key, value);
    }
    return members;
}

// The fast path's parts of `line` agree with its DOM: the same members in the same order,
// each string's text and each other member's value, and the same `value`.
void check_same_as_dom(const std::string& line) {
    CAPTURE(line);
    const auto parts = scan_request_line(line);
    REQUIRE(parts.has_value());
    const json dom = json::parse(line);
    REQUIRE(dom.is_object());
    const auto expected = dom_members(line);
    REQUIRE(parts->members.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        const auto& [key, raw] = parts->members[i];
        CHECK(std::string(key) == expected[i].first);
        CHECK(json::parse(raw) == expected[i].second);
        if (raw.front() == '"') CHECK(std::string(plain_text(raw)) == expected[i].second);
    }
    CHECK(parts->value.has_value() == dom.contains("value"));
    if (parts->value) CHECK(*parts->value == dom["value"]);
}

// An action answering with its argument and the context it was given.
json echo_context(json&& args, const context& ctx) {
    const auto deadline_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(ctx.deadline().time_since_epoch())
            .count();
    return {{"args", args},
            {"activation_id", ctx.activation_id()},
            {"action_name", ctx.action_name()},
            {"namespace", ctx.ns()},
            {"transaction_id", ctx.transaction_id()},
            {"traceparent", ctx.traceparent()},
            {"deadline_ms", deadline_ms}};
}

}  // namespace

TEST_CASE("the lines the platforms send take the fast path, with the DOM's members") {
    check_same_as_dom(PLATFORM_LINE);
    check_same_as_dom(R"({})");
    check_same_as_dom(R"( { "value" : [ ] , "deadline" : 1800000000000 } )");
    check_same_as_dom(R"({"value":null,"activation_id":"a"})");
    check_same_as_dom(R"({"value":"a string","flag":true,"extra":{"nested":["\u00e9",null]}})");
    check_same_as_dom(R"({"deadline":-5,"b":"","a":"z","value":{"x":"line\nbreak"}})");
    check_same_as_dom(
        R"({"value":{"__ow_headers":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}})");
}

TEST_CASE("the lines the fast path leaves to the DOM") {
    const std::vector<std::string> lines = {
        R"({"activation_id":"esc\"aped"})",      // an escape in a string member
        R"({"activation_id":"\u0041"})",         // another
        "{\"namespace\":\"caf\xc3\xa9\"}",       // a string member outside ASCII
        "{\"namespace\":\"\xff\"}",              // not UTF-8 (the DOM refuses it)
        R"({"k\u0065y":"v"})",                   // an escape in a key
        R"({"a":"1","a":"2"})",                  // a key twice (the DOM keeps the last)
        R"({"value":{},"value":[]})",            // `value` twice
        R"({"deadline":9223372036854775808})",   // an integer deadline past a long long
        R"({"deadline":-9223372036854775809})",  // below it
        R"({"extra":{"a":01}})",                 // a member that is not JSON
        "{\"extra\":[\"\xff\"]}",                // nor this one
        R"({"value":{"a":}})",                   // a value that is not JSON
        "{\"value\":\"\xc3\"}",                  // nor this one
        R"([{"value":{}}])",                     // not an object
        R"("value")",
        R"({"value":{}} x)",           // more after the object
        R"({"value":{})",              // an object that does not end
        "\xef\xbb\xbf{\"value\":{}}",  // a byte-order mark (the DOM skips it)
        "",
        std::string("{\"deadline\":4\0 1}", 15),  // a NUL (the DOM stops at it)
    };
    for (const auto& line : lines) {
        CAPTURE(line);
        CHECK_FALSE(scan_request_line(line).has_value());
    }
    std::string many = "{";
    for (size_t i = 0; i <= FAST_PATH_MEMBERS; ++i) {
        many += (i > 0 ? ",\"m" : "\"m") + std::to_string(i) + "\":\"v\"";
    }
    many += "}";
    CHECK_FALSE(scan_request_line(many).has_value());
}

TEST_CASE("handle_request answers the same whichever path reads the line") {
    // The same request, once plain and once with an escaped member that sends it to the DOM.
    const std::string plain = PLATFORM_LINE;
    const std::string through_dom = plain.substr(0, plain.size() - 1) + R"(,"x":"\u0041"})";
    REQUIRE(scan_request_line(plain).has_value());
    REQUIRE_FALSE(scan_request_line(through_dom).has_value());
    const json fast = json::parse(handle_request(plain, echo_context));
    CHECK(fast == json::parse(handle_request(through_dom, echo_context)));
    CHECK(fast["activation_id"] == "0123456789abcdef0123456789abcdef");
    CHECK(fast["deadline_ms"] == 4102444800000LL);
    CHECK(fast["args"]["n"][2] == "é");

    // A numeric deadline, a traceparent header and a scalar value, both ways.
    const std::vector<std::string> lines = {
        R"({"value":{"__ow_headers":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},"deadline":4102444800000,"transaction_id":"t")",
        R"({"value":"text","activation_id":"a")",
        R"({"value":7,"activation_id":"a")",
        R"({"value":true,"activation_id":"a")",
        R"({"value":null,"activation_id":"a")",
        R"({"activation_id":"a")",
    };
    for (const auto& open : lines) {
        CAPTURE(open);
        const std::string fast_line = open + "}";
        const std::string dom_line = open + R"(,"x":"\u0041"})";
        REQUIRE(scan_request_line(fast_line).has_value());
        for (const platform mode : {platform::openwhisk, platform::lambda}) {
            CHECK(handle_request(fast_line, echo_context, mode) ==
                  handle_request(dom_line, echo_context, mode));
        }
    }
}
