// The /init body's decoding, with Go's error texts (docs/protocol.md, /init).
#include <doctest/doctest.h>

#include "protocol/error_answer.hpp"
#include "protocol/init_request.hpp"

using namespace actionloop;

namespace {

std::string error_of(std::string_view body) {
    try {
        parse_init_request(body);
    } catch (const refusal& e) {
        CHECK(e.status() == 400);
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("init bodies decode like upstream, with Go's error texts") {
    auto ok = parse_init_request(
        R"({"value":{"code":"x","main":"niam","binary":false,"env":{"A":"1"}}})");
    CHECK(ok.code == "x");
    CHECK(ok.main == "niam");
    CHECK(ok.env["A"] == "1");
    auto nulls =
        parse_init_request(R"({"value":{"code":null,"main":null,"binary":null,"env":null}})");
    CHECK(nulls.code.empty());
    CHECK(parse_init_request("{}").code.empty());
    CHECK(error_of("XXX") ==
          "Error unmarshaling request: invalid character 'X' looking for beginning of value");
    CHECK(error_of("") == "Error unmarshaling request: unexpected end of JSON input");
    CHECK(error_of("{\"value\":") == "Error unmarshaling request: unexpected end of JSON input");
    CHECK(error_of(R"({"value":{"code":1}})") ==
          "Error unmarshaling request: json: cannot unmarshal number into Go struct field "
          "initBodyRequest.value.code of type string");
    CHECK(error_of(R"({"value":{"binary":"yes"}})") ==
          "Error unmarshaling request: json: cannot unmarshal string into Go struct field "
          "initBodyRequest.value.binary of type bool");
}

TEST_CASE("init bodies over the JSON bounds are refused before they are parsed") {
    const std::string deep = std::string(200000, '[') + std::string(200000, ']');
    CHECK(error_of(R"({"value":{"code":"x","env":{"X":)" + deep + "}}}") ==
          "Error unmarshaling request: the JSON nests deeper than 512 levels (OW_MAX_JSON_DEPTH)");
    try {
        parse_init_request(R"({"value":{"code":"x","env":{"A":"1","B":"2"}}})", {3, 4});
        FAIL("not refused");
    } catch (const refusal& e) {
        CHECK(e.status() == 400);
        CHECK(std::string(e.what()) ==
              "Error unmarshaling request: the JSON has more than 4 members (OW_MAX_JSON_MEMBERS)");
    }
    CHECK(parse_init_request(R"({"value":{"code":"x","env":{"A":"1","B":"2"}}})", {3, 5}).env ==
          nlohmann::json{{"A", "1"}, {"B", "2"}});
}
