// The action's environment map (docs/protocol.md, "The action's environment").
#include <doctest/doctest.h>

#include <algorithm>

#include "payload/env_map.hpp"

using namespace actionloop;

namespace {

bool has(const std::vector<std::string>& env, const std::string& entry) {
    return std::find(env.begin(), env.end(), entry) != env.end();
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

TEST_CASE("env_map persists across applies, init env may set PATH itself") {
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
