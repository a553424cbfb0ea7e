// The environment an action runs in, through the real proxy: the platform's __OW_* values
// arrive whole (even with '=' in them), the proxy's PATH and HOME reach the action, and the
// action runs in its own directory, where it finds the files shipped with it by relative
// path. (The init's env and upstream's expected variables: conformance_test.cpp.)
#include <doctest/doctest.h>

#include <string>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

TEST_CASE("environment: __OW_* values containing = arrive whole") {
    proxy_process proxy(with_env({{"__OW_API_HOST", "https://x=y"}}));
    init_with(proxy, "env.sh");
    CHECK(json_of(proxy.run(json::object())).value("api_host", "") == "https://x=y");
}

TEST_CASE("environment: PATH and HOME reach the action") {
    const std::string path = "/nonexistent-actionloop-bin:" + path_only_env()["PATH"];
    proxy_process proxy(with_env({{"PATH", path}, {"HOME", "/home/actionloop-test"}}));
    init_with(proxy, "env_dump.sh");
    const json seen = json_of(proxy.run(json::object()));
    CHECK(seen.value("PATH", "") == path);
    CHECK(seen.value("HOME", "") == "/home/actionloop-test");
}

TEST_CASE(
    "environment: the action runs in its own directory and finds its files by relative path") {
    proxy_process proxy;
    const std::string exec =
        "#!/bin/bash\nwhile read line; do echo \"{\\\"data\\\":\\\"$(cat data.txt)\\\"}\" >&3; "
        "done\n";
    const std::string zip =
        make_zip({file_entry("exec", exec, 0755), file_entry("data.txt", "shipped")});
    REQUIRE(proxy.init(base64_encode(zip)).status == 200);
    CHECK_REPLY(proxy.run(json::object()), 200, "{\"data\":\"shipped\"}\n");
}

TEST_CASE("environment: a later /init replaces the env of a failed one") {
    // Issue 41, item 6: an env given to a failed /init used to stay in every later action.
    // With the ack, the failed start is a failure however slowly the machine runs it (without,
    // only an exit within upstream's 5 ms start probe is: under ThreadSanitizer it was missed).
    proxy_process proxy(
        with_env({{"__OW_API_HOST", "https://platform"}, {"OW_WAIT_FOR_ACK", "1"}}));
    const json stale = {{"STALE", "from the failed init"}, {"KEPT", "old"}};
    CHECK(proxy.init(fixture_text("start_fails.sh"), "main", &stale).status == 502);
    const json fresh = {{"FRESH", "yes"}, {"KEPT", "new"}};
    const std::string acking_env_dump =
        "#!/bin/bash\necho '{\"ok\":true}' >&3\n" + fixture_text("env_dump.sh");
    REQUIRE(proxy.init(acking_env_dump, "main", &fresh).status == 200);
    const json seen = json_of(proxy.run(json::object()));
    CHECK_FALSE(seen.contains("STALE"));
    CHECK(seen.value("FRESH", "") == "yes");
    CHECK(seen.value("KEPT", "") == "new");
    CHECK(seen.value("__OW_API_HOST", "") == "https://platform");  // the proxy's own stay
}
