// The one JSON scanner (actionloop/detail/json_scan.hpp) of the proxy, the launcher and the
// alert actions. Skim mode: the top-level members of an object found without a DOM, nested
// values skipped whole, escaped quotes honoured, anything that is not one object refused; one
// member found by name. Reader mode: strict JSON with values, escapes decoded, errors with
// their offset, and the plain subset the proxy's answer check uses.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include <actionloop/detail/json_scan.hpp>

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

namespace {

using actionloop::scan::reader;
using actionloop::scan::syntax_error;

// Whether the whole text is one value for a reader with `opts`.
bool reads(std::string_view text, reader::options opts = {}) {
    std::deque<std::string> arena;
    if (opts.arena == nullptr && !opts.plain) opts.arena = &arena;
    reader r(text, opts);
    try {
        r.skip();
        return r.at_end();
    } catch (const syntax_error&) {
        return false;
    }
}

std::string error_of(std::string_view text, std::string_view context = {}) {
    reader r(text, {512, false, nullptr, context});
    try {
        r.skip();
        return r.at_end() ? "" : "trailing";
    } catch (const syntax_error& e) {
        return e.what();
    }
}

}  // namespace

TEST_CASE("json_scan reader: strict JSON, values, escapes decoded into the arena") {
    for (const char* valid : {"{}", "[]", " {\"a\":[1,-2.5e+3,0,true,false,null,\"\"]} ", "\"x\"",
                              "0", "-0.5E-7", "{\"\\u00e9\\ud83d\\ude00\\n\":{}}"}) {
        CAPTURE(valid);
        CHECK(reads(valid));
    }
    for (const char* invalid :
         {"", "{", "{\"a\" 1}", "[1,]", "01", "1.", "-", "+1", "tru", "\"\t\"", "\"\\x\"",
          "\"\\ud800\"", "\"\\udc00\"", "{} {}", "[1] x", "NaN"}) {
        CAPTURE(invalid);
        CHECK_FALSE(reads(invalid));
    }
    std::deque<std::string> arena;
    reader r(R"({"plain":"view","esc":"a\"b\u00e9\ud83d\ude00","n":-12.5})",
             {512, false, &arena, {}});
    r.expect('{');
    CHECK(r.string() == "plain");
    r.expect(':');
    const std::string_view view = r.string();
    CHECK(view == "view");
    CHECK(arena.empty());  // no escape: a view into the text
    r.expect(',');
    CHECK(r.string() == "esc");
    r.expect(':');
    CHECK(r.string() == "a\"b\xc3\xa9\xf0\x9f\x98\x80");
    CHECK(arena.size() == 1);
    r.expect(',');
    CHECK(r.string() == "n");
    r.expect(':');
    CHECK(r.number() == -12.5);
    r.expect('}');
    CHECK(r.at_end());
}

TEST_CASE("json_scan reader: errors name the offset and what was wrong, after the context") {
    CHECK(error_of(R"({"a":1,})", "value: ") == "value: invalid JSON at offset 7: expected '\"'");
    CHECK(error_of("[1,2") == "invalid JSON at offset 4: expected ']'");
    CHECK(error_of("\"abc") == "invalid JSON at offset 4: unterminated string");
    CHECK(error_of("\"a\\qb\"") == "invalid JSON at offset 2: escape outside the plain subset");
    CHECK(error_of(std::string(600, '[') + std::string(600, ']')) ==
          "invalid JSON at offset 513: nested too deep");
}

TEST_CASE("json_scan reader: the plain subset refuses what it does not check itself") {
    const reader::options plain{63, true, nullptr, {}};
    CHECK(reads(R"({"greeting":"Hello, Mike!","n":[1,-2.5,0,true,false,null,{}]})", plain));
    // Valid JSON, but outside the subset: escapes, non-ASCII bytes, exponents, long numbers.
    for (const char* unusual : {R"({"a":"\n"})", "{\"a\":\"\xc3\xa9\"}", R"({"a":1e3})",
                                "[11111111111111111111111111111111]"}) {
        CAPTURE(unusual);
        CHECK(reads(unusual));
        CHECK_FALSE(reads(unusual, plain));
    }
    CHECK(reads(std::string(64, '[') + std::string(64, ']'), plain));
    CHECK_FALSE(reads(std::string(65, '[') + std::string(65, ']'), plain));
}

// check_bounds: the depth and member count of a text, before any DOM is built.
namespace {

actionloop::scan::excess bounds_of(std::string_view text, size_t depth, size_t width) {
    return actionloop::scan::check_bounds(text, {depth, width});
}

}  // namespace

TEST_CASE("json_scan: check_bounds counts containers open at once, exactly") {
    using actionloop::scan::excess;
    CHECK(bounds_of("1", 0, 0) == excess::none);
    CHECK(bounds_of("\"[[[\"", 0, 0) == excess::none);  // brackets in strings do not count
    CHECK(bounds_of("[]", 0, 10) == excess::depth);
    CHECK(bounds_of("[]", 1, 10) == excess::none);
    CHECK(bounds_of("{\"a\":[1]}", 1, 10) == excess::depth);
    CHECK(bounds_of("{\"a\":[1]}", 2, 10) == excess::none);
    CHECK(bounds_of("[[],[],[]]", 2, 10) == excess::none);  // siblings are not nesting
    CHECK(bounds_of(" { \"a\" : { \"b\" : { } } } ", 3, 10) == excess::none);
    CHECK(bounds_of(" { \"a\" : { \"b\" : { } } } ", 2, 10) == excess::depth);
    CHECK(bounds_of("[\"\\\"[[[\",[]]", 2, 10) == excess::none);  // an escaped quote
    // A million levels: one pass, no recursion, stopped at the first level too many.
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    CHECK(bounds_of(deep, 512, 2000000) == excess::depth);
    CHECK(bounds_of(deep, 1000000, 2000000) == excess::none);
}

TEST_CASE("json_scan: check_bounds counts members and elements at every level") {
    using actionloop::scan::excess;
    CHECK(bounds_of("{}", 5, 0) == excess::none);
    CHECK(bounds_of("[ ]", 5, 0) == excess::none);
    CHECK(bounds_of("[0]", 5, 0) == excess::members);
    CHECK(bounds_of("[0]", 5, 1) == excess::none);
    CHECK(bounds_of("{\"a\":[1,2]}", 5, 3) == excess::none);
    CHECK(bounds_of("{\"a\":[1,2]}", 5, 2) == excess::members);
    CHECK(bounds_of("{\"a,b\":\"c,d\",\"e\":{}}", 5, 2) == excess::none);  // commas in strings
    CHECK(bounds_of("[[],[],[]]", 5, 3) == excess::none);
    CHECK(bounds_of("[[],[],[]]", 5, 2) == excess::members);
    CHECK(bounds_of("[[1],[2,3]]", 5, 5) == excess::none);
    CHECK(bounds_of("[[1],[2,3]]", 5, 4) == excess::members);
    // Not JSON: nothing counted past an unterminated string; the parser refuses it later.
    CHECK(bounds_of("[\"", 0, 0) == excess::depth);
    CHECK(bounds_of("\"[[[", 0, 0) == excess::none);
}

TEST_CASE("json_scan: excess_text names the setting and its value") {
    using actionloop::scan::excess;
    using actionloop::scan::excess_text;
    CHECK(excess_text(excess::depth, {512, 7}) ==
          "nests deeper than 512 levels (OW_MAX_JSON_DEPTH)");
    CHECK(excess_text(excess::members, {512, 7}) ==
          "has more than 7 members (OW_MAX_JSON_MEMBERS)");
    CHECK(excess_text(excess::none, {512, 7}).empty());
}
