// bridge_links_test.cpp — the devices the Redis store reads and compares with a device
// (redis/bridge_links.hpp), from the config alone: a camera's bridge, a bridge's cameras, none
// for a device without a bridge, none at all for a config without bridges.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "alert_test_util.hpp"
#include "core/alert_core.hpp"
#include "redis/bridge_links.hpp"

using namespace alerts;
using namespace alerts::test;

namespace {

using strings = std::vector<std::string>;

// Account "site": bridge "br" with cameras "c1" and "c2", and "solo" with no bridge.
nlohmann::json bridged() {
    nlohmann::json c = sample_config();
    c["accounts"]["site"] = {{"recipients", {"ops@site"}},
                             {"devices",
                              {{"br", nlohmann::json::object()},
                               {"c1", {{"bridge", "br"}}},
                               {"c2", {{"bridge", "br"}}},
                               {"solo", nlohmann::json::object()}}}};
    return c;
}

strings linked(const bridge_links& links, const std::string& account, const std::string& device) {
    strings out;
    for (const bridge_links::linked& l :
         links.of(account, device, alert_core::device_key_hash(account, device))) {
        CHECK(l.hash == alert_core::device_key_hash(l.account, l.device));
        out.push_back(std::string(l.account) + "/" + std::string(l.device));
    }
    return out;
}

}  // namespace

TEST_CASE("bridge links: a camera reads its bridge, a bridge its cameras, others nothing") {
    const auto config = make_config(bridged());
    bridge_links links;
    links.build(*config);
    CHECK_FALSE(links.empty());
    CHECK(linked(links, "site", "c1") == strings{"site/br"});
    CHECK(linked(links, "site", "c2") == strings{"site/br"});
    const strings cameras = linked(links, "site", "br");
    CHECK(cameras.size() == 2);
    CHECK(std::count(cameras.begin(), cameras.end(), "site/c1") == 1);
    CHECK(std::count(cameras.begin(), cameras.end(), "site/c2") == 1);
    CHECK(linked(links, "site", "solo").empty());
    CHECK(linked(links, "site", "nobody").empty());
    CHECK(linked(links, "other", "c1").empty());
}

TEST_CASE("bridge links: a config without bridges has none, and a rebuild replaces them") {
    bridge_links links;
    links.build(*make_config(bridged()));
    const auto plain = make_config(sample_config());
    links.build(*plain);
    CHECK(links.empty());
    CHECK(linked(links, "site", "c1").empty());
}
