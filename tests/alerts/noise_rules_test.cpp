// noise_rules_test.cpp — the noise rules (docs/alerts.md, "Flapping", "Bridges", "Maintenance
// windows", "Reminders"): each rule alone, their interactions (a flapping bridge, a silenced
// bridge, a reminder due inside a window, a flap that starts inside a hold), the four
// situations of the issue with their notification counts, the answer's new fields through
// /run's text path, and the config's errors.
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

#include <filesystem>

#include "alert_test_util.hpp"
#include "core/result_json.hpp"
#include "generator/stream_generator.hpp"
#include "redis/redis_store.hpp"
#include "redis_server.hpp"
#include "runtime/file_store.hpp"
#include "runtime/redis_url.hpp"
#include "store_identity.hpp"

using namespace alerts;
using namespace alerts::test;
using json = nlohmann::json;

namespace {

// sample_config() plus a site account: a bridge and 40 cameras behind it (cam01..cam40), and
// cam99 with no bridge.
json bridge_site_config() {
    json c = sample_config();
    json devices = json::object();
    devices["bridge1"] = {{"name", "Site bridge"}};
    for (int i = 1; i <= 40; ++i) {
        char id[8];
        std::snprintf(id, sizeof id, "cam%02d", i);
        devices[id] = {{"name", std::string("Camera ") + id}, {"bridge", "bridge1"}};
    }
    devices["cam99"] = json::object();
    c["accounts"]["site"] = {{"recipients", {"ops@site"}}, {"devices", devices}};
    return c;
}

// cam01..cam40 (etags hold views: the names live as long as the tests).
std::string_view cam(int i) {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out(41);
        for (int k = 1; k <= 40; ++k) {
            char id[8];
            std::snprintf(id, sizeof id, "cam%02d", k);
            out[static_cast<std::size_t>(k)] = id;
        }
        return out;
    }();
    return names[static_cast<std::size_t>(i)];
}

etag site_status(std::string_view device, double ts, device_state s) {
    return status(device, ts, s, {}, "site");
}

// The slow flapper of the issue: off 6 minutes, on 2, for a day, with a tick every minute.
std::vector<note> slow_flapper_day(const json& config) {
    core_harness h({}, config);
    std::vector<note> all;
    for (double t = 0; t < 86400; t += 60) {
        std::vector<etag> batch;
        const double cycle = std::fmod(t, 480);
        if (cycle == 0) batch.push_back(status("cam1", T0 + t, device_state::offline));
        if (cycle == 360) batch.push_back(status("cam1", T0 + t, device_state::online));
        const auto notes = h.run(batch, T0 + t + 1);
        all.insert(all.end(), notes.begin(), notes.end());
    }
    return all;
}

}  // namespace

TEST_CASE("flapping: the 6-off/2-on camera sends at most 6 notifications a day, not ~360") {
    json off = sample_config();
    off["flapping"] = false;
    const auto before = slow_flapper_day(off);
    const auto after = slow_flapper_day(sample_config());
    MESSAGE("slow flapper, one day: " << before.size() << " notifications before, " << after.size()
                                      << " with flap detection");
    CHECK(before.size() >= 350);
    REQUIRE(after.size() == 6);
    const char* expected[] = {"Offline", "Online",  "Offline",
                              "Online",  "Offline", "FlappingStarted"};
    for (std::size_t i = 0; i < 6; ++i) CHECK(after[i].type == expected[i]);
    CHECK(after[5].event_ts == T0 + 1320);  // the sixth change
}

TEST_CASE("flapping: no state notifications while it flaps, then FlappingStopped and the state") {
    core_harness h;
    // Six changes within the hour, all inside holds: nothing but FlappingStarted.
    for (int i = 0; i < 5; ++i) {
        CHECK(h.run({status("cam1", T0 + 10 * i,
                            i % 2 ? device_state::online : device_state::offline)},
                    T0 + 10 * i)
                  .empty());
    }
    CHECK(h.stats().pending == 1);  // the fifth change: offline, a hold runs
    auto notes = h.run({status("cam1", T0 + 50, device_state::online)}, T0 + 50);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "FlappingStarted");
    CHECK(notes[0].event_ts == T0 + 50);
    CHECK(h.stats().pending == 0);
    // While it flaps: changes counted, nothing sent, no hold.
    CHECK(h.run({status("cam1", T0 + 100, device_state::offline)}, T0 + 100).empty());
    CHECK(h.stats().flapping == 1);
    CHECK(h.stats().pending == 0);
    CHECK(h.tick(T0 + 1000).empty());  // the offline hold would have matured at 400
    // 1800 s without a change: FlappingStopped (state offline), then the Offline it owes.
    CHECK(h.tick(T0 + 1899).empty());
    notes = h.tick(T0 + 1900);
    REQUIRE(notes.size() == 2);
    CHECK(notes[0].type == "FlappingStopped");
    CHECK(notes[0].event_ts == T0 + 100);
    CHECK(notes[1].type == "Offline");
    CHECK(notes[1].event_ts == T0 + 100);
    CHECK(h.tick(T0 + 5000).empty());
}

TEST_CASE("flapping: a device back in its announced state stops with FlappingStopped alone") {
    core_harness h;
    for (int i = 0; i < 6; ++i) {
        h.run({status("cam1", T0 + 10 * i, i % 2 ? device_state::online : device_state::offline)},
              T0 + 10 * i);
    }
    auto notes = h.tick(T0 + 50 + 1800);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "FlappingStopped");
    CHECK(h.tick(T0 + 10000).empty());
}

TEST_CASE("flapping: the thresholds come from the config, and false turns it off") {
    json c = sample_config();
    c["flapping"] = {{"changes", 3}, {"window", 100}, {"quiet", 50}};
    core_harness h({}, c);
    h.run({status("cam1", T0, device_state::offline)}, T0);
    h.run({status("cam1", T0 + 10, device_state::online)}, T0 + 10);
    auto notes = h.run({status("cam1", T0 + 200, device_state::offline)}, T0 + 200);
    CHECK(notes.empty());  // three changes, but not within 100 s
    notes = h.run({status("cam1", T0 + 210, device_state::online),
                   status("cam1", T0 + 220, device_state::offline)},
                  T0 + 220);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "FlappingStarted");
    notes = h.tick(T0 + 270);
    REQUIRE(notes.size() == 1);  // quiet 50 s: stopped; the offline hold (300 s) still runs
    CHECK(notes[0].type == "FlappingStopped");
    notes = h.tick(T0 + 520);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Offline");
}

TEST_CASE("bridges: 40 cameras behind a bridge that lost its uplink give one notification") {
    json off = bridge_site_config();
    off["flapping"] = false;
    for (const json& config : {off, bridge_site_config()}) {
        core_harness h({}, config);
        std::vector<etag> down;
        down.push_back(site_status("bridge1", T0, device_state::internet_offline));
        for (int i = 1; i <= 40; ++i) {
            // From 100 s before the bridge's change to 30 s after it.
            down.push_back(site_status(cam(i), T0 - 100 + 3 * i, device_state::offline));
        }
        CHECK(h.run(down, T0 + 20).empty());
        std::vector<note> notes;
        for (double t = T0 + 60; t <= T0 + 600; t += 60) {
            auto n = h.tick(t);
            notes.insert(notes.end(), n.begin(), n.end());
        }
        REQUIRE(notes.size() == 1);
        CHECK(notes[0].type == "InternetOffline");
        CHECK(notes[0].device == "bridge1");
        // The bridge comes back, 39 cameras with it: the bridge's Online only. cam40 stays
        // offline: its own Offline 300 s after the bridge's return.
        std::vector<etag> up{site_status("bridge1", T0 + 1000, device_state::online)};
        for (int i = 1; i <= 39; ++i)
            up.push_back(site_status(cam(i), T0 + 1005, device_state::online));
        CHECK(h.run(up, T0 + 1010).empty());
        notes = h.tick(T0 + 1095);
        REQUIRE(notes.size() == 1);
        CHECK(notes[0].type == "Online");
        CHECK(notes[0].device == "bridge1");
        CHECK(h.tick(T0 + 1299).empty());
        notes = h.tick(T0 + 1300);
        REQUIRE(notes.size() == 1);
        CHECK(notes[0].type == "Offline");
        CHECK(notes[0].device == "cam40");
        CHECK(notes[0].event_ts == T0 - 100 + 120);  // when it went offline
        CHECK(h.tick(T0 + 100000).empty());
    }
}

TEST_CASE("bridges: the answer carries affected and affectedDevices, stats count inhibited") {
    alert_service svc(action_kind::state, {});
    std::ostringstream log;
    json etags = json::array();
    etags.push_back({{"account", "site"},
                     {"device", "bridge1"},
                     {"type", "status"},
                     {"ts", T0},
                     {"state", "offline"}});
    etags.push_back({{"account", "site"},
                     {"device", "cam02"},
                     {"type", "status"},
                     {"ts", T0 - 50},
                     {"state", "offline"}});
    etags.push_back({{"account", "site"},
                     {"device", "cam01"},
                     {"type", "status"},
                     {"ts", T0 + 5},
                     {"state", "offline"}});
    etags.push_back({{"account", "site"},
                     {"device", "cam03"},
                     {"type", "status"},
                     {"ts", T0 - 200},
                     {"state", "offline"}});  // before the grace: its own
    etags.push_back({{"account", "site"},
                     {"device", "cam99"},
                     {"type", "status"},
                     {"ts", T0},
                     {"state", "offline"}});  // no bridge
    const json config = bridge_site_config();
    json out =
        run_activation(svc, {{"etags", etags}, {"now", T0 + 10}, {"config", config}}, 0, log);
    CHECK(out["notifications"].empty());
    out = run_activation(svc, {{"etags", json::array()}, {"now", T0 + 400}, {"config", config}}, 0,
                         log);
    std::map<std::string, json> by_device;
    for (const json& n : out["notifications"]) by_device[n["device"].get<std::string>()] = n;
    REQUIRE(out["notifications"].size() == 3);
    CHECK(by_device["cam03"]["notifType"] == "Offline");
    CHECK(by_device["cam99"]["notifType"] == "Offline");
    const json& b = by_device["bridge1"];
    CHECK(b["notifType"] == "Offline");
    CHECK(b["name"] == "Site bridge");
    CHECK(b["affected"] == 2);
    CHECK(b["affectedDevices"] == json::parse(R"([{"device": "cam01", "name": "Camera cam01"},
                          {"device": "cam02", "name": "Camera cam02"}])"));
    CHECK(out["stats"]["inhibited"] == 2);
    // A camera going offline after the bridge's Offline is inhibited too (not in the list).
    etags = json::array();
    etags.push_back({{"account", "site"},
                     {"device", "cam04"},
                     {"type", "status"},
                     {"ts", T0 + 450},
                     {"state", "offline"}});
    out = run_activation(svc, {{"etags", etags}, {"now", T0 + 800}, {"config", config}}, 0, log);
    CHECK(out["notifications"].empty());
    CHECK(out["stats"]["inhibited"] == 1);
}

TEST_CASE("bridges: a camera whose hold matured first waits for its bridge's Offline") {
    core_harness h({}, bridge_site_config());
    h.run({site_status("cam01", T0 - 100, device_state::offline),
           site_status("bridge1", T0, device_state::offline)},
          T0);
    CHECK(h.tick(T0 + 250).empty());  // cam01's hold passed at 200: it waits for the bridge
    CHECK(h.stats().pending == 2);
    auto notes = h.tick(T0 + 300);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].device == "bridge1");
    CHECK(h.stats().inhibited == 1);
}

TEST_CASE("bridges: a bridge back before its hold lets the cameras report on their own") {
    core_harness h({}, bridge_site_config());
    h.run({site_status("cam01", T0, device_state::offline),
           site_status("bridge1", T0, device_state::offline)},
          T0);
    h.run({site_status("bridge1", T0 + 100, device_state::online)}, T0 + 100);
    auto notes = h.tick(T0 + 300);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Offline");
    CHECK(notes[0].device == "cam01");
}

TEST_CASE("bridges: a flapping bridge inhibits nothing") {
    core_harness h({}, bridge_site_config());
    for (int i = 0; i < 6; ++i) {
        h.run(
            {site_status("bridge1", T0 + i, i % 2 ? device_state::online : device_state::offline)},
            T0 + i);
    }
    h.run({site_status("bridge1", T0 + 10, device_state::offline),
           site_status("cam01", T0 + 10, device_state::offline)},
          T0 + 10);
    const auto notes = h.tick(T0 + 400);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Offline");
    CHECK(notes[0].device == "cam01");
}

TEST_CASE("maintenance: notifications inside a window are held back, the state is tracked") {
    json c = sample_config();
    c["maintenance"] = json::parse(R"([{"account": "acct1", "device": "cam1",
        "from": 1764460800, "until": 1764464400, "comment": "re-cabling"}])");
    core_harness h({}, c);
    // cam1 goes offline and comes back inside the window: nothing, then or at its end.
    h.run({status("cam1", T0 + 100, device_state::offline)}, T0 + 100);
    CHECK(h.tick(T0 + 400).empty());
    CHECK(h.stats().silenced == 1);
    h.run({status("cam1", T0 + 1000, device_state::online)}, T0 + 1000);
    CHECK(h.tick(T0 + 4000).empty());
    // cam2 is not in the window.
    h.run({status("cam2", T0 + 100, device_state::offline)}, T0 + 100);
    REQUIRE(h.tick(T0 + 400).size() == 1);
    // Motion inside the window: not sent, counted.
    CHECK(h.run({motion("cam1", T0 + 2000, "yard", 0.9)}, T0 + 2000).empty());
    CHECK(h.stats().silenced == 1);
}

TEST_CASE("maintenance: a device whose state changed gets it when the window ends") {
    json c = sample_config();
    c["maintenance"] = json::parse(
        R"([{"account": "acct1", "from": 1764460800, "until": 1764464400}])");  // all of acct1
    core_harness h({}, c);
    h.run({status("cam1", T0 + 100, device_state::offline),
           status("cam2", T0 + 200, device_state::offline)},
          T0 + 200);
    CHECK(h.tick(T0 + 3599).empty());
    CHECK(h.stats().pending == 2);
    const auto notes = h.tick(T0 + 3610);
    REQUIRE(notes.size() == 2);
    for (const note& n : notes) {
        CHECK(n.type == "Offline");
        CHECK(n.delay == doctest::Approx(10));  // measured from the window's end
        CHECK(n.event_ts == (n.device == "cam1" ? T0 + 100 : T0 + 200));
    }
}

TEST_CASE("maintenance: a silenced bridge sends its Offline, with its cameras, at the end") {
    json c = bridge_site_config();
    c["maintenance"] = json::parse(R"([{"account": "site", "device": "bridge1",
        "from": 1764460800, "until": 1764462600}])");
    core_harness h({}, c);
    h.run({site_status("bridge1", T0 + 10, device_state::offline),
           site_status("cam01", T0 + 20, device_state::offline),
           site_status("cam02", T0 + 30, device_state::offline)},
          T0 + 30);
    CHECK(h.tick(T0 + 1000).empty());
    const auto notes = h.tick(T0 + 1800);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].device == "bridge1");
    CHECK(h.stats().inhibited == 2);
}

TEST_CASE("reminders: StillOffline at each time after the Offline, none once back") {
    json c = sample_config();
    c["reminders"] = {{"offline", {3600, 86400}}};
    alert_service svc(action_kind::state, {});
    std::ostringstream log;
    auto run = [&](json etags, double now) {
        return run_activation(svc, {{"etags", std::move(etags)}, {"now", now}, {"config", c}}, 0,
                              log);
    };
    json etags = json::array();
    etags.push_back({{"account", "acct1"},
                     {"device", "cam1"},
                     {"type", "status"},
                     {"ts", T0},
                     {"state", "offline"}});
    run(etags, T0);
    json out = run(json::array(), T0 + 310);  // the Offline, published at T0 + 310
    REQUIRE(out["notifications"].size() == 1);
    const std::string offline_key = out["notifications"][0]["dedupKey"];
    CHECK(run(json::array(), T0 + 310 + 3599)["notifications"].empty());
    out = run(json::array(), T0 + 310 + 3600);
    REQUIRE(out["notifications"].size() == 1);
    const json first = out["notifications"][0];
    CHECK(first["notifType"] == "StillOffline");
    CHECK(first["reminder"] == 1);
    CHECK(first["eventTs"] == T0);
    CHECK(first["alertDelay"] == 0);
    out = run(json::array(), T0 + 310 + 86400);
    REQUIRE(out["notifications"].size() == 1);
    CHECK(out["notifications"][0]["reminder"] == 2);
    CHECK(out["notifications"][0]["dedupKey"] != first["dedupKey"]);
    CHECK(first["dedupKey"] != offline_key);
    CHECK(run(json::array(), T0 + 400000)["notifications"].empty());

    // One thread: the Offline opens it, its reminders and the Online that ends it name it.
    CHECK(first["threadKey"] == offline_key);
    CHECK(out["notifications"][0]["threadKey"] == offline_key);

    // Back, then a second outage, back before its first reminder: none is sent.
    auto set = [&](double ts, const char* state) {
        etags[0]["ts"] = ts;
        etags[0]["state"] = state;
        run(etags, ts);
    };
    set(T0 + 450000, "online");
    out = run(json::array(), T0 + 460000);
    REQUIRE(out["notifications"].size() == 1);
    CHECK(out["notifications"][0]["threadKey"] == offline_key);
    CHECK(out["notifications"][0]["resolves"] == offline_key);
    set(T0 + 500000, "offline");
    out = run(json::array(), T0 + 500300);
    REQUIRE(out["notifications"].size() == 1);
    // A new outage, a new thread (its Offline's own key).
    CHECK(out["notifications"][0]["threadKey"] == out["notifications"][0]["dedupKey"]);
    CHECK(out["notifications"][0]["threadKey"] != offline_key);
    set(T0 + 501000, "online");
    out = run(json::array(), T0 + 510000);
    REQUIRE(out["notifications"].size() == 1);
    CHECK(out["notifications"][0]["notifType"] == "Online");
    CHECK(run(json::array(), T0 + 600000)["notifications"].empty());
}

TEST_CASE("reminders: one due inside a maintenance window is silenced, the next one is sent") {
    json c = sample_config();
    c["reminders"] = {{"offline", {3600, 7200}}};
    c["maintenance"] = json::parse(R"([{"account": "acct1", "device": "cam1",
        "from": 1764464000, "until": 1764465000}])");  // T0 + 3200 .. T0 + 4200
    core_harness h({}, c);
    h.run({status("cam1", T0 - 300, device_state::offline)}, T0 - 300);
    REQUIRE(h.tick(T0).size() == 1);  // Offline published at T0
    CHECK(h.tick(T0 + 3600).empty());
    CHECK(h.stats().silenced == 1);
    const auto notes = h.tick(T0 + 7200);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "StillOffline");
}

TEST_CASE("the new config keys are validated at /init like the rest") {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"flapping": {"changes": 1}})",
         "config: flapping.changes must be a whole number from 2 to 64"},
        {R"({"flapping": {"chnages": 6}})",
         "config: flapping has an unknown key 'chnages' (known keys: changes, window, quiet)"},
        {R"({"flapping": "on"})", "config: config.flapping must be false, true or an object"},
        {R"({"bridge_grace": -1})", "config: config.bridge_grace must be a non-negative number"},
        {R"({"reminders": {"offline": [0]}})",
         "config: reminders.offline must be an array of positive numbers (seconds)"},
        {R"({"reminders": {"online": [60]}})",
         "config: reminders has an unknown key 'online' (known keys: offline)"},
        {R"({"maintenance": [{"account": "nope", "from": 1, "until": 2}]})",
         "config: maintenance[0].account must name an account of the config"},
        {R"({"maintenance": [{"account": "acct1", "from": 2, "until": 1}]})",
         "config: maintenance[0].until must be after 'from'"},
        {R"({"maintenance": [{"account": "acct1", "from": 1}]})",
         "config: maintenance[0] needs 'from' and 'until'"},
        {R"({"maintenance": {"account": "acct1"}})",
         "config: config.maintenance must be an array of windows"},
    };
    for (const auto& [patch, message] : cases) {
        CAPTURE(patch);
        json c = sample_config();
        c.merge_patch(json::parse(patch));
        CHECK_THROWS_WITH_AS(parse_config(c), message, config_error);
    }
    json c = sample_config();
    c["accounts"]["acct1"]["devices"]["cam1"]["bridge"] = "nope";
    CHECK_THROWS_WITH_AS(
        parse_config(c),
        "config: accounts.acct1.devices.cam1.bridge names 'nope', which is not a device of the "
        "account",
        config_error);
    c["accounts"]["acct1"]["devices"]["cam1"]["bridge"] = "cam1";
    CHECK_THROWS_WITH_AS(parse_config(c),
                         "config: accounts.acct1.devices.cam1.bridge must name another device of "
                         "the account",
                         config_error);
    json s = bridge_site_config();
    s["accounts"]["site"]["devices"]["bridge1"]["bridge"] = "cam99";
    CHECK_THROWS_WITH_AS(parse_config(s),
                         "config: accounts.site.devices.bridge1.bridge is set on a bridge (devices "
                         "name it as theirs): a bridge has no bridge",
                         config_error);
}

// Every rule at once — a bridge outage with a camera left behind, a flapping camera, a window,
// reminders — through the memory store and through a state dir whose process restarts after
// every activation, and Redis shared by two containers: the same notifications, fields and
// dedupKeys.
TEST_CASE("identity: the noise rules decide alike in memory, a restarted state dir and Redis") {
    json config = bridge_site_config();
    config["reminders"] = {{"offline", {600, 1800}}};
    config["maintenance"] = json::parse(R"([{"account": "acct1", "device": "cam2",
        "from": 1764461000, "until": 1764462000}])");
    std::vector<std::pair<std::vector<etag>, double>> batches;
    std::vector<etag> down{site_status("bridge1", T0, device_state::offline)};
    for (int i = 1; i <= 40; ++i)
        down.push_back(site_status(cam(i), T0 + i, device_state::offline));
    batches.push_back({down, T0 + 41});
    for (int i = 0; i < 8; ++i) {  // cam1 flaps, cam2 goes down inside its window
        batches.push_back({{status("cam1", T0 + 100 + 20 * i,
                                   i % 2 ? device_state::online : device_state::offline),
                            status("cam2", T0 + 250, device_state::offline)},
                           T0 + 100 + 20 * i});
    }
    std::vector<etag> up{site_status("bridge1", T0 + 2000, device_state::online)};
    for (int i = 1; i <= 30; ++i)
        up.push_back(site_status(cam(i), T0 + 2001, device_state::online));
    for (double t = T0 + 60; t < T0 + 6000; t += 60) {
        batches.push_back({{}, t});
        if (t == T0 + 1980) batches.push_back({up, T0 + 2001});
    }

    const auto texts = notification_texts;
    const std::multiset<std::string> memory = through_memory(config, batches);
    const std::multiset<std::string> disk =
        through_restarted_state_dir(config, batches, "alerts-noise");
    std::map<std::string, int> types = types_of(memory);
    CHECK(types["FlappingStarted"] == 1);
    CHECK(types["FlappingStopped"] == 1);
    // bridge1's Offline (affected 40) and its first reminder (back before the second), Online;
    // cam2's Offline at its window's end and 2 reminders; cam31..cam40, still offline 300 s
    // after the bridge's return: an Offline and 2 reminders each; cam1 flaps back to online.
    CHECK(types["Offline"] == 12);
    CHECK(types["Online"] == 1);
    CHECK(types["StillOffline"] == 23);
    CHECK(disk == memory);
    // Redis, shared by two containers that take the batches in turn: the bridge's Offline
    // with its 40 cameras, the cameras left behind, flapping, the window and the reminders
    // alike (each activation reads a bridge's cameras and a camera's bridge with it).
    redis_server server;
    std::multiset<std::string> shared;
    {
        redis_store_options o;
        o.url = parse_redis_url(server.url());
        core_harness ha({}, config), hb({}, config);
        redis_store sa(o), sb(o);
        for (std::size_t i = 0; i < batches.size(); ++i) {
            core_harness& h = i % 2 ? hb : ha;
            redis_store& store = i % 2 ? sb : sa;
            for (const std::string& t :
                 texts(h.core, store.process(h.core, batches[i].first, batches[i].second))) {
                shared.insert(t);
            }
        }
    }
    CHECK(shared.size() == memory.size());
    CHECK(shared == memory);
    for (const auto& t : memory)
        if (shared.count(t) != memory.count(t)) MESSAGE("memory: " << memory.count(t) << " " << t);
    for (const auto& t : shared)
        if (shared.count(t) != memory.count(t)) MESSAGE("redis: " << shared.count(t) << " " << t);
    for (const auto& t : memory)
        if (disk.count(t) != memory.count(t)) MESSAGE("memory: " << memory.count(t) << " " << t);
    for (const auto& t : disk)
        if (disk.count(t) != memory.count(t)) MESSAGE("disk: " << disk.count(t) << " " << t);
}

// A bridge and its cameras whose events reach different containers sharing Redis: each
// activation reads a camera's bridge and a bridge's cameras with it, and a camera changed by
// another container between the bridge's read and commit makes the commit conflict. The same
// notifications as one memory-only process: one InternetOffline with its 40 cameras, the
// bridge's Online, and cam40's own Offline 300 s after the bridge's return.
TEST_CASE("bridges in Redis: a bridge and its cameras in two containers give one notification") {
    const json config = bridge_site_config();
    std::vector<std::pair<std::vector<etag>, double>> batches;
    batches.push_back({{site_status("bridge1", T0, device_state::internet_offline)}, T0 + 1});
    std::vector<etag> down;
    for (int i = 1; i <= 39; ++i)
        down.push_back(site_status(cam(i), T0 + 1, device_state::offline));
    batches.push_back({down, T0 + 2});
    const std::size_t racing = batches.size();  // cam40 goes down in B while A decides this tick
    batches.push_back({{}, T0 + 300});
    batches.push_back({{}, T0 + 400});
    batches.push_back({{site_status("bridge1", T0 + 1000, device_state::online)}, T0 + 1000});
    std::vector<etag> up;
    for (int i = 1; i <= 39; ++i)
        up.push_back(site_status(cam(i), T0 + 1001, device_state::online));
    batches.push_back({up, T0 + 1001});
    for (double t : {T0 + 1095, T0 + 1299, T0 + 1300, T0 + 5000}) batches.push_back({{}, t});
    const std::vector<etag> late{site_status(cam(40), T0 + 5, device_state::offline)};

    auto texts = [](const alert_core& core, const batch_result& r) {
        std::vector<std::string> out;
        for (const notification& n : r.notifications)
            out.push_back(notification_json(core, n).dump());
        return out;
    };
    std::vector<std::string> memory;
    {
        core_harness h({}, config);
        memory_store store;
        for (std::size_t i = 0; i < batches.size(); ++i) {
            if (i == racing) store.process(h.core, late, T0 + 6);
            for (const std::string& t :
                 texts(h.core, store.process(h.core, batches[i].first, batches[i].second)))
                memory.push_back(t);
        }
    }
    REQUIRE(memory.size() == 3);
    const json offline = json::parse(memory[0]);
    CHECK(offline["notifType"] == "InternetOffline");
    CHECK(offline["affected"] == 40);
    CHECK(offline["affectedDevices"].size() == 40);
    CHECK(json::parse(memory[1])["notifType"] == "Online");
    CHECK(json::parse(memory[2])["notifType"] == "Offline");
    CHECK(json::parse(memory[2])["device"] == "cam40");

    redis_server server;
    redis_store_options o;
    o.url = parse_redis_url(server.url());
    core_harness ha({}, config), hb({}, config);
    redis_store sb(o);
    bool raced = false;
    redis_store_options oa = o;
    oa.before_commit = [&] {
        if (raced || ha.core.result().notifications.empty()) return;
        raced = true;  // another container: cam40 goes down between A's read and its commit
        CHECK(sb.process(hb.core, late, T0 + 6).notifications.empty());
    };
    redis_store sa(oa);
    std::vector<std::string> shared;
    for (std::size_t i = 0; i < batches.size(); ++i) {
        core_harness& h = i % 2 ? hb : ha;
        redis_store& store = i % 2 ? sb : sa;
        CAPTURE(i);
        REQUIRE((i != racing || &store == &sa));
        for (const std::string& t :
             texts(h.core, store.process(h.core, batches[i].first, batches[i].second)))
            shared.push_back(t);
    }
    CHECK(raced);
    CHECK(sa.counters().conflicts == 1);
    CHECK(shared == memory);
}

namespace {

// The generator's stream (minute batches, a tick after each) through one core: notifications.
std::vector<note> run_generated(const generator_options& o, int minutes) {
    stream_generator gen(o);
    core_harness h({}, gen.config());
    std::vector<note> all;
    for (int m = 0; m < minutes; ++m) {
        const auto& minute = gen.next_minute();
        std::vector<etag> etags;
        std::vector<char> ids;
        gen.to_etags(minute.data(), minute.size(), etags, ids);
        auto n = h.run(etags, minute.empty() ? gen.minute_start() : minute.back().arrival + 0.05);
        all.insert(all.end(), n.begin(), n.end());
        n = h.tick(gen.minute_start() + 1);
        all.insert(all.end(), n.begin(), n.end());
    }
    return all;
}

generator_options quiet_fleet() {
    generator_options o;
    o.accounts = 1;
    o.rate = 2;
    o.motion_fraction = 0;
    o.flap_fraction = 0;
    o.outage_fraction = 0;
    return o;
}

}  // namespace

TEST_CASE("alertgen's bridge outages: one notification per outage, its 40 cameras inhibited") {
    generator_options o = quiet_fleet();
    o.devices = 82;  // two bridges with 40 cameras each
    o.bridge_size = 40;
    o.bridge_outage_fraction = 1;
    const auto notes = run_generated(o, 90);
    int down = 0;
    for (const note& n : notes) {
        CAPTURE(n.type);
        CAPTURE(n.device);
        CHECK((n.type == "InternetOffline" || n.type == "Online"));
        down += n.type == "InternetOffline";
    }
    CHECK(down >= 2);
    // The same stream without the rules' inhibition would send an Offline per camera.
    MESSAGE("bridge outages over 90 minutes: " << notes.size() << " notifications");
}

TEST_CASE("alertgen's slow flappers: at most 6 notifications a day each") {
    generator_options o = quiet_fleet();
    o.devices = 5;
    o.slow_flap_fraction = 1;
    const auto notes = run_generated(o, 1440);
    std::map<std::string, int> per_device, started;
    for (const note& n : notes) {
        ++per_device[n.device];
        started[n.device] += n.type == "FlappingStarted";
    }
    REQUIRE(per_device.size() == 5);
    for (const auto& [device, count] : per_device) {
        CAPTURE(device);
        CHECK(count <= 6);  // the holds' before the sixth change (fewer from mid-cycle), then one
        CHECK(started[device] == 1);
    }
}

TEST_CASE("flapping: a device that changed state once costs nothing once it is idle again") {
    core_harness h;
    std::vector<std::string> names;
    for (int i = 0; i < 3000; ++i) names.push_back("dev" + std::to_string(i));
    const std::size_t before = h.core.memory_bytes();
    std::vector<etag> batch;
    for (const std::string& n : names) {
        batch.push_back(status(n, T0, device_state::offline));
        batch.push_back(status(n, T0 + 10, device_state::online));  // a flap inside the hold
    }
    h.run(batch, T0 + 10);
    const std::size_t busy = h.core.memory_bytes();
    h.tick(T0 + 3 * 3600);  // the changes are two windows old: their history goes
    const std::size_t idle = h.core.memory_bytes();
    MESSAGE("memory: " << before << " empty, " << busy << " after the flaps, " << idle << " idle");
    CHECK(idle < busy - 3000 * 40);
}
