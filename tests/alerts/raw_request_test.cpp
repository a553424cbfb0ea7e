// raw_request_test.cpp — the launcher's top-level scan of a request line for the raw entry
// point (launcher/src/request_scan.hpp): members found without a DOM, nested values skipped
// whole, escaped quotes honoured, anything that is not one object refused.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "../../launcher/src/request_scan.hpp"

namespace {

using members = std::vector<std::pair<std::string, std::string>>;

bool scan(std::string_view line, members& out) {
    out.clear();
    return actionloop::scan::for_each_member(line, [&out](std::string_view k, std::string_view v) {
        out.emplace_back(std::string(k), std::string(v));
    });
}

}  // namespace

TEST_CASE("raw request: the members of the request line, values as raw text") {
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

TEST_CASE("raw request: what is not one object is refused") {
    members m;
    for (const char* line :
         {"", "[]", "{", "{\"a\"}", "{\"a\": }", "{\"a\": 1", "{\"a\": [1}", "{\"a\": \"open}",
          "{\"a\": 1} {}", "{\"a\": 1,}", "{\"a\": 1 \"b\": 2}", "{\"a\": \"x\\\"}"}) {
        CAPTURE(line);
        CHECK_FALSE(scan(line, m));
    }
}
