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

TEST_CASE("bridge links: by config index, the same links as by names, each naming its device") {
    const auto config = make_config(bridged());
    bridge_links links;
    links.build(*config);
    for (const account_config& a : config->accounts) {
        for (const auto& [id, index] : a.devices) {
            CAPTURE(id);
            const auto by_names = links.of(a.id, id, alert_core::device_key_hash(a.id, id));
            const auto by_index = links.of_config(static_cast<std::uint32_t>(index));
            REQUIRE(by_index.end() - by_index.begin() == by_names.end() - by_names.begin());
            for (auto n = by_names.begin(), i = by_index.begin(); n != by_names.end(); ++n, ++i) {
                CHECK(n->device == i->device);
                REQUIRE(i->cfg != bridge_links::NO_CONFIG);
                CHECK(config->devices[i->cfg].id == i->device);
            }
        }
    }
    links.build(*make_config(sample_config()));
    CHECK(links.of_config(0).begin() == links.of_config(0).end());
}

// The core's device of a config index is the one its names find: for devices seen before the
// config that moved every index, after it, and none for a device not seen yet.
TEST_CASE("alert_core: configured_device follows the config's indices across a config change") {
    alert_core core;
    nlohmann::json j = bridged();
    core.set_config(make_config(j));
    core.process({heartbeat("c1", T0, device_state::online, {}, "site"),
                  heartbeat("br", T0, device_state::online, {}, "site")},
                 T0);
    auto check = [&core](const std::vector<std::string>& unseen) {
        const alert_config& cfg = *core.config();
        for (const account_config& a : cfg.accounts) {
            for (const auto& [id, index] : a.devices) {
                CAPTURE(id);
                const std::uint32_t found = core.find_device(a.id, id);
                CHECK(core.configured_device(static_cast<std::uint32_t>(index)) == found);
                const bool not_seen =
                    std::find(unseen.begin(), unseen.end(), id) != unseen.end() || a.id != "site";
                CHECK((found == string_interner::npos) == not_seen);
            }
        }
    };
    check({"c2", "solo"});
    // New devices ahead of them in the config's order move every index.
    j["accounts"]["site"]["devices"]["a0"] = {{"bridge", "br"}};
    j["accounts"]["aaa"] = {{"recipients", {"x@y"}},
                            {"devices", {{"z", nlohmann::json::object()}}}};
    core.set_config(make_config(j));
    check({"c2", "solo", "a0"});
    core.process({heartbeat("a0", T0 + 1, device_state::online, {}, "site"),
                  heartbeat("c2", T0 + 1, device_state::online, {}, "site")},
                 T0 + 1);
    check({"solo"});
}
