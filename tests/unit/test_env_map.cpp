// The action's environment map and the /init body decoding (docs/protocol.md).
#include <doctest/doctest.h>

#include <algorithm>

#include "http/http_error.hpp"
#include "payload/env_map.hpp"
#include "payload/init_request.hpp"

using namespace actionloop;

namespace {

bool has(const std::vector<std::string>& env, const std::string& entry) {
    return std::find(env.begin(), env.end(), entry) != env.end();
}

std::string error_of(std::string_view body) {
    try {
        parse_init_request(body);
    } catch (const http_error& e) {
        CHECK(e.status() == 400);
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("env_map follows upstream's order and keeps values with '=' whole") {
    char e1[] = "__OW_API_HOST=https://x=y";
    char e2[] = "PATH=/usr/bin:/bin";
    char e3[] = "HOME=/root";
    char e4[] = "OTHER=ignored";
    char e5[] = "__OW_NAMESPACE=docker";
    char* environ_entries[] = {e1, e2, e3, e4, e5, nullptr};
    env_map env("1.2.3", "exec/env", "1", environ_entries);
    env.apply(nlohmann::json{{"__OW_NAMESPACE", "init"},
                             {"n", 123},
                             {"o", {{"a", 1}}},
                             {"b", true},
                             {"z", nullptr},
                             {"WITH SPACE", "x"}});
    auto out = env.for_action();
    CHECK(has(out, "__OW_PROXY_VERSION=1.2.3"));
    CHECK(has(out, "__OW_EXECUTION_ENV=exec/env"));
    CHECK(has(out, "__OW_WAIT_FOR_ACK=1"));
    CHECK(has(out, "__OW_API_HOST=https://x=y"));
    CHECK(has(out, "__OW_NAMESPACE=init"));  // init env wins over the proxy's
    CHECK(has(out, "n=123"));
    CHECK(has(out, "o={\"a\":1}"));
    CHECK(has(out, "b=true"));
    CHECK(has(out, "z=null"));
    CHECK(has(out, "WITH SPACE=x"));
    CHECK(has(out, "PATH=/usr/bin:/bin"));
    CHECK(has(out, "HOME=/root"));
    CHECK_FALSE(has(out, "OTHER=ignored"));
}

TEST_CASE("env_map persists across applies; init env may set PATH itself") {
    char* none[] = {nullptr};
    env_map env("v", "", "", none);
    env.apply(nlohmann::json{{"A", "1"}});
    env.apply(nlohmann::json{{"B", "2"}, {"PATH", "/opt/bin"}});
    auto out = env.for_action();
    CHECK(has(out, "A=1"));
    CHECK(has(out, "B=2"));
    CHECK(has(out, "PATH=/opt/bin"));
    CHECK(std::count_if(out.begin(), out.end(),
                        [](const std::string& s) { return s.rfind("PATH=", 0) == 0; }) == 1);
}

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

TEST_CASE("base64 is strict standard base64 with padding") {
    CHECK(decode_base64("aGVsbG8=") == "hello");
    CHECK(decode_base64("aGVs\nbG8=") == "hello");
    CHECK(decode_base64("") == "");
    auto error_at = [](std::string_view text) {
        try {
            decode_base64(text);
        } catch (const http_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error_at("aGV$") == "cannot decode the request: illegal base64 data at input byte 3");
    CHECK(error_at("aGVsbG8") == "cannot decode the request: illegal base64 data at input byte 4");
    CHECK(error_at("aG=s") == "cannot decode the request: illegal base64 data at input byte 3");
}
