// grouping_test.cpp — sites' groups (docs/alerts.md, "Grouping"): a site outage announced as one
// SiteOffline group_wait seconds after its first Offline, later changes batched per
// group_interval, the last return closing the group with a SiteOnline; the same notifications in
// memory, in a state dir restarted at every activation and in Redis shared by three containers
// (one of which loses the race for the group's record); bounds; and the config without
// grouping keeping today's notifications.
#include <deque>
#include <set>
#include <sstream>

#include "alert_test_util.hpp"
#include "core/result_json.hpp"
#include "redis/redis_store.hpp"
#include "redis_server.hpp"
#include "runtime/redis_url.hpp"
#include "store_identity.hpp"

using namespace alerts;
using namespace alerts::test;
using json = nlohmann::json;

namespace {

constexpr double GROUP_WAIT = 30;
constexpr double GROUP_INTERVAL = 300;

// The cameras' ids, kept for the ETags' views.
const std::string& camera(int i) {
    static std::deque<std::string> names;
    while (static_cast<int>(names.size()) <= i) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "cam-%04zu", names.size());
        names.emplace_back(buf);
    }
    return names[static_cast<std::size_t>(i)];
}

// sample_config() plus site "lobby" ("Main lobby") with `cameras` cameras, grouped.
json lobby_config(int cameras, bool grouping = true) {
    json c = sample_config();
    json& a = c["accounts"]["acct1"];
    a["sites"] = {{"lobby", {{"name", "Main lobby"}}}};
    for (int i = 0; i < cameras; ++i) a["devices"][camera(i)] = {{"site", "lobby"}};
    if (grouping) {
        c["grouping"] = {{"group_wait", GROUP_WAIT}, {"group_interval", GROUP_INTERVAL}};
    }
    return c;
}

// 37 of 40 cameras go offline one a second from T0; 35 come back at T0 + 700 and the last two
// at T0 + 720; a tick every second until T0 + 1000.
batch_list site_outage() {
    batch_list batches;
    for (int s = 0; s <= 1000; ++s) {
        const double t = T0 + s;
        std::vector<etag> batch;
        if (s < 37) batch.push_back(status(camera(s), t, device_state::offline));
        if (s == 700) {
            for (int i = 0; i < 35; ++i)
                batch.push_back(status(camera(i), t, device_state::online));
        }
        if (s == 720) {
            for (int i = 35; i < 37; ++i)
                batch.push_back(status(camera(i), t, device_state::online));
        }
        batches.push_back({batch, t + 0.5});
    }
    return batches;
}

std::vector<json> of_type(const std::multiset<std::string>& texts, const std::string& type) {
    std::vector<json> out;
    for (const std::string& t : texts) {
        json j = json::parse(t);
        if (j["notifType"] == type) out.push_back(std::move(j));
    }
    return out;
}

void report_difference(const std::multiset<std::string>& a, const std::multiset<std::string>& b) {
    for (const auto& t : a)
        if (b.count(t) != a.count(t)) MESSAGE("only in the first: " << t);
    for (const auto& t : b)
        if (b.count(t) != a.count(t)) MESSAGE("only in the second: " << t);
}

}  // namespace

TEST_CASE(
    "grouping: the config takes grouping at the top and per account, and refuses bad values") {
    json c = lobby_config(2);
    c["accounts"]["acct2"]["grouping"] = false;
    c["accounts"]["acct1"]["grouping"] = {{"group_interval", 60}};
    const alert_config cfg = parse_config(c);
    CHECK(cfg.grouping.enabled);
    CHECK(cfg.accounts[0].grouping.enabled);
    CHECK(cfg.accounts[0].grouping.wait == GROUP_WAIT);  // the top's, inherited
    CHECK(cfg.accounts[0].grouping.interval == 60);
    CHECK_FALSE(cfg.accounts[1].grouping.enabled);
    CHECK(cfg.sites[0].devices == 2);
    const std::vector<std::pair<json, std::string>> refused = {
        {{{"grouping", "yes"}}, "config: grouping must be false, true or an object"},
        {{{"grouping", {{"wait", 30}}}},
         "config: grouping has an unknown key 'wait' (known keys: enabled, group_wait, "
         "group_interval)"},
        {{{"grouping", {{"group_interval", 0}}}},
         "config: grouping.group_interval must be from 1 to 86400 seconds"},
        {{{"grouping", {{"group_wait", 90000}}}},
         "config: grouping.group_wait must be at most 86400 seconds"},
    };
    for (const auto& [patch, error] : refused) {
        json bad = lobby_config(1);
        bad.merge_patch(patch);
        CHECK_THROWS_WITH_AS(parse_config(bad), error.c_str(), config_error);
    }
    json control = lobby_config(1);
    control["accounts"]["acct1"]["sites"]["a\x01"] = json::object();
    CHECK_THROWS_WITH_AS(parse_config(control),
                         "config: accounts.acct1.sites.a\x01 has a control character in its id",
                         config_error);
}

TEST_CASE("grouping: a 40-camera site outage is one SiteOffline, one batched update and one "
          "SiteOnline, in memory, a restarted state dir and Redis across 3 containers") {
    const json config = lobby_config(40);
    const batch_list batches = site_outage();
    const std::multiset<std::string> memory = through_memory(config, batches);
    std::map<std::string, int> types = types_of(memory);
    CHECK(types.size() == 3);
    CHECK(types["SiteOffline"] == 1);
    CHECK(types["SiteChanged"] == 1);
    CHECK(types["SiteOnline"] == 1);

    const json offline = of_type(memory, "SiteOffline").at(0);
    const double first_offline = T0 + 300;  // cam-0000's hold
    CHECK(offline["eventTs"] == first_offline);
    CHECK(offline["publishTs"].get<double>() <= first_offline + GROUP_WAIT + 1);
    CHECK(offline["site"] == "lobby");
    CHECK(offline["siteName"] == "Main lobby");
    CHECK_FALSE(offline.contains("device"));
    CHECK(offline["cameras"] == 40);
    CHECK(offline["camerasDown"] == 31);  // those whose hold ended by T0 + 330
    CHECK(offline["devicesDown"].size() == 31);
    CHECK(offline["devicesDown"][0] == json{{"device", "cam-0000"}, {"since", T0}});  // went down
    CHECK(offline["devicesBack"].empty());
    CHECK(offline["recipients"] == json{"ops@a1"});
    CHECK(offline["threadKey"] == offline["dedupKey"]);

    const json changed = of_type(memory, "SiteChanged").at(0);
    CHECK(changed["publishTs"].get<double>() <= first_offline + GROUP_WAIT + GROUP_INTERVAL + 1);
    CHECK(changed["camerasDown"] == 37);
    CHECK(changed["devicesDown"].size() == 6);
    CHECK(changed["update"] == 1);
    CHECK(changed["threadKey"] == offline["dedupKey"]);

    const json online = of_type(memory, "SiteOnline").at(0);
    CHECK(online["camerasDown"] == 0);
    CHECK(online["devicesBack"].size() == 37);
    CHECK(online["resolves"] == offline["dedupKey"]);
    CHECK(online["threadKey"] == offline["dedupKey"]);
    CHECK(online["eventTs"] == first_offline);
    CHECK(online["publishTs"].get<double>() <= T0 + 720 + 95 + 1);  // the last camera's return

    const std::multiset<std::string> state_dir =
        through_restarted_state_dir(config, batches, "alerts-grouping");
    CHECK(state_dir == memory);
    report_difference(memory, state_dir);
    const std::multiset<std::string> shared = through_redis(config, batches);
    CHECK(shared == memory);
    report_difference(memory, shared);
}

TEST_CASE("grouping: the same batches in two containers at once give each notification once, "
          "the loser of each race deciding again") {
    const json config = lobby_config(40);
    const batch_list batches = site_outage();
    // Container 0's commit of each batch waits on container 1's commit of the same batch (as
    // when OpenWhisk re-sends an activation another container is still running).
    redis_server server;
    redis_store_options o;
    o.url = parse_redis_url(server.url());
    core_harness other_core({}, config);
    redis_store other(o);
    std::multiset<std::string> out;
    const std::pair<std::vector<etag>, double>* current = nullptr;
    o.before_commit = [&] {
        if (!current) return;
        for (std::string& t : notification_texts(
                 other_core.core, other.process(other_core.core, current->first, current->second)))
            out.insert(std::move(t));
        current = nullptr;  // once per batch: the retry goes through
    };
    core_harness h({}, config);
    redis_store store(o);
    for (const auto& b : batches) {
        current = &b;
        for (std::string& t : notification_texts(h.core, store.process(h.core, b.first, b.second)))
            out.insert(std::move(t));
    }
    CHECK(out == through_memory(config, batches));
    CHECK(store.counters().conflicts >= 3 + 37 + 37);  // each batch that changed anything
}

TEST_CASE("grouping: a group that closes before its SiteOffline sends nothing, and a tamper "
          "bypasses the group") {
    json config = lobby_config(4);
    config["grouping"]["group_wait"] = 300;
    batch_list batches;
    // cam-0000 and cam-0001 down at T0, their holds end at T0 + 300, back at T0 + 310: their
    // Onlines end at T0 + 405, before the group's wait (T0 + 600).
    batches.push_back({{status(camera(0), T0, device_state::offline),
                        status(camera(1), T0, device_state::offline)},
                       T0});
    batches.push_back({{}, T0 + 301});
    batches.push_back({{status(camera(0), T0 + 310, device_state::online),
                        status(camera(1), T0 + 310, device_state::online)},
                       T0 + 310});
    // cam-0002: motion, then offline 10 s later while its site is armed: PossibleTamper at once.
    batches.push_back({{motion(camera(2), T0 + 400, "any", 1)}, T0 + 400});
    batches.push_back({{status(camera(2), T0 + 410, device_state::offline)}, T0 + 410});
    for (double t = T0 + 411; t <= T0 + 1200; t += 10) batches.push_back({{}, t});
    // The motion is on a region the camera has.
    config["accounts"]["acct1"]["devices"][camera(2)]["regions"] = {{"any", json::object()}};
    const std::multiset<std::string> memory = through_memory(config, batches);
    std::map<std::string, int> types = types_of(memory);
    CHECK(types["PossibleTamper"] == 1);
    CHECK(types["Alert"] == 1);
    CHECK(types.count("SiteOffline") == 0);
    CHECK(types.count("Offline") == 0);
    CHECK(types.size() == 2);
    CHECK(through_restarted_state_dir(config, batches, "alerts-grouping-quiet") == memory);
    CHECK(through_redis(config, batches) == memory);
}

TEST_CASE("grouping: without the grouping key a site's outage is announced camera by camera, "
          "as before") {
    const std::multiset<std::string> memory =
        through_memory(lobby_config(40, false), site_outage());
    std::map<std::string, int> types = types_of(memory);
    CHECK(types.size() == 2);
    CHECK(types["Offline"] == 37);
    CHECK(types["Online"] == 37);
}

TEST_CASE("grouping: 3,000 cameras of one site down at once are announced in bounded lists, "
          "each camera once") {
    const json config = lobby_config(3000);
    batch_list batches;
    std::vector<etag> down;
    for (int i = 0; i < 3000; ++i) down.push_back(status(camera(i), T0, device_state::offline));
    batches.push_back({down, T0});
    batches.push_back({{}, T0 + 300});
    batches.push_back({{}, T0 + 400});
    batches.push_back({{}, T0 + 600});  // the last thousand: a group_interval after the second
    const std::multiset<std::string> memory = through_memory(config, batches);
    std::set<std::string> named;
    std::size_t notes = 0;
    for (const std::string& t : memory) {
        const json j = json::parse(t);
        CHECK(j["devicesDown"].size() <= 1000);
        for (const json& d : j["devicesDown"]) CHECK(named.insert(d["device"]).second);
        ++notes;
        if (j["notifType"] == "SiteChanged") CHECK(j["camerasDown"] <= 3000);
    }
    CHECK(named.size() == 3000);
    CHECK(notes == 3);
    CHECK(types_of(memory)["SiteOffline"] == 1);
    CHECK(through_restarted_state_dir(config, batches, "alerts-grouping-big") == memory);
    CHECK(through_redis(config, batches) == memory);
}

TEST_CASE("grouping: an ETag may not name a site's group") {
    core_harness h({}, lobby_config(2));
    std::string id = group_device_id("lobby");
    h.run({status(id, T0, device_state::offline)}, T0);
    CHECK(h.stats().rejected == 1);
    CHECK(h.core.device_count() == 0);
}

TEST_CASE("grouping: the console's devices-now lists the site's cameras down as grouped, never "
          "the group") {
    const json config = lobby_config(40);
    batch_list batches = site_outage();
    batches.resize(400);  // the SiteOffline went out, the SiteChanged not yet
    redis_server server;
    redis_store_options o;
    o.url = parse_redis_url(server.url());
    core_harness h({}, config);
    redis_store store(o);
    for (const auto& [batch, now] : batches) store.process(h.core, batch, now);
    std::istringstream keys(server.command({"HKEYS", "alerts:now"}));
    int cameras = 0;
    for (std::string key; std::getline(keys, key);) {
        CHECK(key.find('\x01') == std::string::npos);
        ++cameras;
    }
    CHECK(cameras == 37);
    const json cam = json::parse(server.command({"HGET", "alerts:now", "5:acct1:cam-0000"}));
    CHECK(cam["grouped"] == true);
    CHECK(cam["announced"] == "offline");
    CHECK(cam["site"] == "lobby");
}
