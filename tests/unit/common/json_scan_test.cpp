// The one JSON scanner (common/json_scan.hpp) the proxy and the launcher share: the top-level
// members of an object found without a DOM, nested values skipped whole, escaped quotes
// honoured, anything that is not one object refused; one member found by name.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "json_scan.hpp"

namespace {

using members = std::vector<std::pair<std::string, std::string>>;

bool scan(std::string_view line, members& out) {
    out.clear();
    return actionloop::scan::for_each_member(line, [&out](std::string_view k, std::string_view v) {
        out.emplace_back(std::string(k), std::string(v));
    });
}

}  // namespace

TEST_CASE("json scan: the members of the request line, values as raw text") {
    members m;
    REQUIRE(scan(R"({"value": {"etags": [{"a": "}\"]"}], "n": [[]]}, "activation_id": "x\"y",)"
                 R"( "deadline": 1764460800000 , "flag": true, "none": null})",
                 m));
    CHECK(m == members{{R"("value")", R"({"etags": [{"a": "}\"]"}], "n": [[]]})"},
                       {R"("activation_id")", R"("x\"y")"},
                       {R"("deadline")", "1764460800000"},
                       {R"("flag")", "true"},
                       {R"("none")", "null"}});
    REQUIRE(scan(R"(  {}  )", m));
    CHECK(m.empty());
    REQUIRE(scan(R"({"a\\": "b\\\\", "c": "\\\""})", m));
    CHECK(m == members{{R"("a\\")", R"("b\\\\")"}, {R"("c")", R"("\\\"")"}});
}

TEST_CASE("json scan: what is not one object is refused") {
    members m;
    for (const char* line :
         {"", "[]", "{", "{\"a\"}", "{\"a\": }", "{\"a\": 1", "{\"a\": [1}", "{\"a\": \"open}",
          "{\"a\": 1} {}", "{\"a\": 1,}", "{\"a\": 1 \"b\": 2}", "{\"a\": \"x\\\"}"}) {
        CAPTURE(line);
        CHECK_FALSE(scan(line, m));
    }
}

TEST_CASE("json scan: one member by name, the first one, without looking further") {
    using actionloop::scan::find_member;
    const std::string_view line =
        R"({"value":{"deadline":"1"},"deadline":"1764460800000","x":1,"deadline":"2"})";
    CHECK(find_member(line, "deadline") == std::optional<std::string_view>(R"("1764460800000")"));
    CHECK(find_member(line, "x") == std::optional<std::string_view>("1"));
    CHECK_FALSE(find_member(line, "missing").has_value());
    CHECK_FALSE(find_member(R"({"value":{"deadline":"1"}})", "deadline").has_value());
    CHECK_FALSE(find_member(R"(["deadline", 1])", "deadline").has_value());
    // Found before a malformed rest: the scan stops at the member it looked for.
    CHECK(find_member(R"({"a":1, "b" 2})", "a") == std::optional<std::string_view>("1"));
    CHECK_FALSE(find_member(R"({"a":1, "b" 2})", "b").has_value());
}

TEST_CASE("json scan: strings end at their first unescaped quote, short or long") {
    using actionloop::scan::skip_string;
    // Within the first 16 bytes (looked at one by one) and past them (memchr).
    CHECK(skip_string(R"("ab\"c" x)", 0) == 7);
    CHECK(skip_string(R"("ab\\" x)", 0) == 6);
    const std::string long_escaped = R"("0123456789abcdef\"ghij\\\"k\\" tail)";
    CHECK(skip_string(long_escaped, 0) == long_escaped.find(" tail"));
    const std::string long_plain = "\"" + std::string(100, 'x') + "\",";
    CHECK(skip_string(long_plain, 0) == 102);
    CHECK(skip_string("\"" + std::string(40, 'x'), 0) == actionloop::scan::npos);
    CHECK(skip_string(R"("abc)", 0) == actionloop::scan::npos);
}
