// nlohmann-json's literal operators in C++ actions. The json.hpp that `compile` and the
// precompiled header use declares "..."_json and "..."_json_pointer without defining them (an
// inline definition cost every /init the parser's instantiation, see cmake/json_literals.cmake);
// the launcher defines them once. These cases show that actions using them still compile, link
// (once per program, however many files use them) and behave as the library documents.
#include <doctest/doctest.h>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

// Both literals, unqualified (the library's global using-declarations) and through
// nlohmann::literals; the text of a "..."_json is parsed when the call runs.
const std::string literals_action = R"CPP(
#include <nlohmann/json.hpp>
using namespace nlohmann::literals;

nlohmann::json main(nlohmann::json args) {
    nlohmann::json answer = R"({"list": [1, 2], "nested": {"a": {"b": "deep"}}})"_json;
    answer["empty"] = "{}"_json;
    answer["b"] = answer.at("/nested/a/b"_json_pointer);
    answer["pointer"] = ("/a"_json_pointer / "b").to_string();
    if (args.contains("text")) {
        const std::string text = args["text"];
        answer["parsed"] = nlohmann::json::parse(text);
    }
    if (args.value("bad", false)) answer["never"] = "{not json"_json;
    return answer;
}
)CPP";

}  // namespace

TEST_CASE("cpp: an action using \"...\"_json and \"...\"_json_pointer compiles and runs") {
    proxy_process proxy(cpp_runtime());
    CHECK_REPLY(proxy.init(literals_action), 200, OK_BODY);
    const json expected = {{"list", {1, 2}},
                           {"nested", {{"a", {{"b", "deep"}}}}},
                           {"empty", json::object()},
                           {"b", "deep"},
                           {"pointer", "/a/b"}};
    CHECK(json_of(proxy.run(json::object())) == expected);
    json with_text = expected;
    with_text["parsed"] = {true, nullptr};
    CHECK(json_of(proxy.run(json{{"text", "[true, null]"}})) == with_text);
    // A malformed literal throws json's parse_error when it runs: an application error.
    const json failed = json_of(proxy.run(json{{"bad", true}}));
    CHECK(contains(failed.value("error", ""), "parse error"));
    CHECK_REPLY(proxy.run(json::object()), 200, expected.dump() + "\n");
}

TEST_CASE("cpp: json literals in several files of a zip link once") {
    proxy_process proxy(cpp_runtime());
    const std::string zip = make_zip({
        file_entry("main.cpp", R"CPP(
#include <nlohmann/json.hpp>
nlohmann::json other();
nlohmann::json main(nlohmann::json) {
    return {{"main", "[1]"_json}, {"other", other()}, {"p", "/x"_json_pointer.to_string()}};
}
)CPP"),
        file_entry("lib/other.cpp", R"CPP(
#include <actionloop/action.hpp>
nlohmann::json other() { return R"({"o": true})"_json.at("/o"_json_pointer); }
)CPP"),
    });
    CHECK_REPLY(proxy.init(base64_encode(zip)), 200, OK_BODY);
    CHECK(json_of(proxy.run(json::object())) == json{{"main", {1}}, {"other", true}, {"p", "/x"}});
}
