// sites_test.cpp — sites, their arming schedules and tamper detection (docs/alerts.md, "Sites
// and schedules", "Time intervals", "Tamper"): named time intervals in a time zone, right
// across both 2027 daylight-saving changes of Europe/Berlin and America/New_York; a site's
// motion announced only while armed; PossibleTamper at once for a camera of an armed site that
// goes offline right after motion, resolved by its Online; and the same decisions in memory, a
// state dir restarted at every activation, and Redis shared by three containers.
#include <filesystem>
#include <set>
#include <unistd.h>

#include "alert_test_util.hpp"
#include "core/device_status.hpp"
#include "core/result_json.hpp"
#include "core/silence.hpp"
#include "core/time_interval.hpp"
#include "redis/redis_store.hpp"
#include "redis_server.hpp"
#include "runtime/redis_url.hpp"
#include "store_identity.hpp"

using namespace alerts;
using namespace alerts::test;
using json = nlohmann::json;

namespace {

// 00:00 UTC of days of 2027 (date -u -d @…).
constexpr double MAR14 = 1804982400;  // a Sunday: New York springs forward at 07:00 UTC
constexpr double MAR28 = 1806192000;  // a Sunday: Berlin springs forward at 01:00 UTC
constexpr double OCT31 = 1824940800;  // a Sunday: Berlin falls back at 01:00 UTC
constexpr double NOV07 = 1825545600;  // a Sunday: New York falls back at 06:00 UTC
constexpr double JAN04 = 1799020800;  // a Monday
constexpr double H = 3600;

time_interval interval(const json& j) { return parse_time_interval("t", j); }

json hours(const char* from, const char* to, const char* location) {
    return json::array(
        {{{"times", {{{"start_time", from}, {"end_time", to}}}}, {"location", location}}});
}

std::string refusal(const json& j) {
    try {
        parse_time_interval("night", j);
    } catch (const time_interval_error& e) {
        return e.what();
    }
    return "accepted";
}

// sample_config() plus a site "hq" armed at night (22:00 to 06:00 in Berlin): cam1 in it;
// a bridge in site "yard" (always armed) with cam3 behind it, which takes its site.
json sites_config() {
    json c = sample_config();
    c["time_intervals"] = json::parse(R"({
      "night": [{"times": [{"start_time": "22:00", "end_time": "24:00"},
                           {"start_time": "00:00", "end_time": "06:00"}],
                 "location": "Europe/Berlin"}]})");
    json& a = c["accounts"]["acct1"];
    a["sites"] = json::parse(R"({"hq": {"name": "Head office", "armed": ["night"]},
                                 "yard": {}})");
    a["devices"]["cam1"]["site"] = "hq";
    a["devices"]["bridge3"] = {{"site", "yard"}};
    a["devices"]["cam3"] = {{"bridge", "bridge3"}, {"regions", {{"gate", json::object()}}}};
    return c;
}

}  // namespace

TEST_CASE("time intervals: Alertmanager's fields, each refusal names the entry and the field") {
    const json ok = json::parse(R"([{"times": [{"start_time": "09:00", "end_time": "17:00"}],
        "weekdays": ["monday:friday"], "days_of_month": ["1:-1"], "months": ["january:march", "12"],
        "years": ["2027"], "location": "America/New_York"}])");
    CHECK(refusal(ok) == "accepted");
    const std::vector<std::pair<json, std::string>> cases = {
        {json::object(), "time_intervals.night must be an array of 1 to 64 entries"},
        {json::array({{{"hours", 1}}}),
         "time_intervals.night[0] has an unknown key 'hours' (known keys: times, weekdays, "
         "days_of_month, months, years, location)"},
        {json::parse(R"([{"times": [{"start_time": "22:00", "end_time": "06:00"}]}])"),
         "time_intervals.night[0].times[0] ends before it starts (a range over midnight is two "
         "ranges: to 24:00, and from 00:00)"},
        {json::parse(R"([{"times": [{"start_time": "24:00", "end_time": "24:00"}]}])"),
         "time_intervals.night[0].times[0].start_time has '24:00', which is not a time "
         "\"HH:MM\" from 00:00 to 24:00"},
        {json::parse(R"([{"times": [{"start_time": "9:00", "end_time": "10:00"}]}])"),
         "time_intervals.night[0].times[0].start_time has '9:00', which is not a time "
         "\"HH:MM\" from 00:00 to 24:00"},
        {json::parse(R"([{"weekdays": ["friday:monday"]}])"),
         "time_intervals.night[0].weekdays has 'friday:monday', which runs backwards"},
        {json::parse(R"([{"weekdays": ["funday"]}])"),
         "time_intervals.night[0].weekdays has 'funday', which is not a weekday (monday, …)"},
        {json::parse(R"([{"days_of_month": ["0"]}])"),
         "time_intervals.night[0].days_of_month has '0', which is not a day of the month (1 "
         "to 31, or -31 to -1 from its end)"},
        {json::parse(R"([{"months": ["13"]}])"),
         "time_intervals.night[0].months has '13', which is not a month (january, … or 1 to "
         "12)"},
        {json::parse(R"([{"years": [2027]}])"),
         "time_intervals.night[0].years must be an array of strings like \"a\" or \"a:b\""},
        {json::parse(R"([{"location": "Europe/Atlantis"}])"),
         "time_intervals.night[0].location names 'Europe/Atlantis', which is not a time zone "
         "of the system's tz database (/usr/share/zoneinfo)"},
        {json::parse(R"([{"location": "Local"}])"),
         "time_intervals.night[0].location is 'Local', which depends on the machine: name the "
         "zone (e.g. Europe/Berlin)"},
    };
    for (const auto& [j, message] : cases) {
        CAPTURE(j.dump());
        CHECK(refusal(j) == message);
    }
}

TEST_CASE("time intervals: too many entries, ranges or names are refused before they are kept") {
    json entries = json::array();
    for (int i = 0; i < 65; ++i) entries.push_back(json::object());
    CHECK(refusal(entries) == "time_intervals.night must be an array of 1 to 64 entries");
    json ranges = json::array();
    for (int i = 0; i < 65; ++i) ranges.push_back("monday");
    CHECK(refusal(json::array({{{"weekdays", ranges}}})) ==
          "time_intervals.night[0].weekdays must be an array of at most 64 strings like \"a\" or "
          "\"a:b\"");
    json c = sample_config();
    for (int i = 0; i < 1025; ++i) c["time_intervals"]["t" + std::to_string(i)] = {json::object()};
    CHECK_THROWS_WITH_AS(parse_config(c), "config: time_intervals has more than 1024 names",
                         config_error);
}

TEST_CASE("time intervals: weekdays, days of the month from either end, months and years") {
    const time_interval weekdays = interval(json::parse(R"([{"weekdays": ["monday:friday"]}])"));
    CHECK(weekdays.contains(JAN04));                      // Monday 00:00 UTC
    CHECK(weekdays.contains(JAN04 + 4 * 86400 + 86399));  // Friday 23:59:59
    CHECK_FALSE(weekdays.contains(JAN04 + 5 * 86400));    // Saturday
    CHECK_FALSE(weekdays.contains(JAN04 - 1));            // Sunday 23:59:59
    // The last three days of any month, and the 1st.
    const time_interval ends = interval(json::parse(R"([{"days_of_month": ["-3:-1", "1"]}])"));
    CHECK_FALSE(ends.contains(MAR28));              // March 28: the 4th from the end
    CHECK(ends.contains(MAR28 + 86400));            // March 29
    CHECK(ends.contains(MAR28 + 3 * 86400));        // March 31
    CHECK(ends.contains(MAR28 + 4 * 86400));        // April 1
    CHECK_FALSE(ends.contains(MAR28 + 5 * 86400));  // April 2
    const time_interval months =
        interval(json::parse(R"([{"months": ["November:december"], "years": ["2027:2028"]}])"));
    CHECK(months.contains(NOV07));
    CHECK_FALSE(months.contains(OCT31));
    CHECK_FALSE(months.contains(NOV07 - 365 * 86400));  // 2026
    // The local day decides: 23:30 UTC on Sunday March 14 is Monday 00:30 in Berlin.
    const time_interval berlin_monday =
        interval(json::parse(R"([{"weekdays": ["monday"], "location": "Europe/Berlin"}])"));
    CHECK(berlin_monday.contains(MAR14 + 23.5 * H));
    CHECK_FALSE(berlin_monday.contains(MAR14 + 22.5 * H));
}

TEST_CASE("time intervals: Europe/Berlin's 2027 changes, the missing hour and the repeated one") {
    // March 28: 02:00 CET becomes 03:00 CEST at 01:00 UTC; 02:00–03:00 does not exist.
    const time_interval missing = interval(hours("02:00", "03:00", "Europe/Berlin"));
    for (double t = MAR28 - 2 * H; t < MAR28 + 4 * H; t += 60) {
        CAPTURE(t);
        CHECK_FALSE(missing.contains(t));
    }
    const time_interval around = interval(hours("01:00", "04:00", "Europe/Berlin"));
    CHECK_FALSE(around.contains(MAR28 - 1));      // 00:59:59 CET
    CHECK(around.contains(MAR28));                // 01:00 CET
    CHECK(around.contains(MAR28 + H - 1));        // 01:59:59 CET
    CHECK(around.contains(MAR28 + H));            // 03:00 CEST
    CHECK(around.contains(MAR28 + 2 * H - 1));    // 03:59:59 CEST: two real hours in all
    CHECK_FALSE(around.contains(MAR28 + 2 * H));  // 04:00 CEST
    // October 31: 03:00 CEST becomes 02:00 CET at 01:00 UTC; 02:00–03:00 happens twice.
    const time_interval twice = interval(hours("02:00", "03:00", "Europe/Berlin"));
    CHECK_FALSE(twice.contains(OCT31 - 1));      // 01:59:59 CEST
    CHECK(twice.contains(OCT31));                // 02:00 CEST
    CHECK(twice.contains(OCT31 + H - 1));        // 02:59:59 CEST
    CHECK(twice.contains(OCT31 + H));            // 02:00 CET, again
    CHECK(twice.contains(OCT31 + 2 * H - 1));    // 02:59:59 CET
    CHECK_FALSE(twice.contains(OCT31 + 2 * H));  // 03:00 CET
}

TEST_CASE("time intervals: America/New_York's 2027 changes, the missing hour and the repeated "
          "one") {
    // March 14: 02:00 EST becomes 03:00 EDT at 07:00 UTC.
    const time_interval missing = interval(hours("02:00", "03:00", "America/New_York"));
    for (double t = MAR14 + 5 * H; t < MAR14 + 9 * H; t += 60) {
        CAPTURE(t);
        CHECK_FALSE(missing.contains(t));
    }
    const time_interval around = interval(hours("01:00", "04:00", "America/New_York"));
    CHECK_FALSE(around.contains(MAR14 + 6 * H - 1));  // 00:59:59 EST
    CHECK(around.contains(MAR14 + 6 * H));            // 01:00 EST
    CHECK(around.contains(MAR14 + 7 * H));            // 03:00 EDT
    CHECK_FALSE(around.contains(MAR14 + 8 * H));      // 04:00 EDT
    // November 7: 02:00 EDT becomes 01:00 EST at 06:00 UTC; 01:00–02:00 happens twice.
    const time_interval twice = interval(hours("01:00", "02:00", "America/New_York"));
    CHECK_FALSE(twice.contains(NOV07 + 5 * H - 1));  // 00:59:59 EDT
    CHECK(twice.contains(NOV07 + 5 * H));            // 01:00 EDT
    CHECK(twice.contains(NOV07 + 6 * H));            // 01:00 EST, again
    CHECK(twice.contains(NOV07 + 7 * H - 1));        // 01:59:59 EST
    CHECK_FALSE(twice.contains(NOV07 + 7 * H));      // 02:00 EST
}

TEST_CASE("sites: the config names sites and intervals, a bridge's cameras take its site") {
    const auto cfg = make_config(sites_config());
    const account_config& a = cfg->accounts[0];
    const device_config& cam1 = cfg->devices[a.devices.at("cam1")];
    const device_config& cam3 = cfg->devices[a.devices.at("cam3")];
    const device_config& cam2 = cfg->devices[a.devices.at("cam2")];
    REQUIRE(cfg->site_of(cam1));
    CHECK(cfg->site_of(cam1)->id == "hq");
    REQUIRE(cfg->site_of(cam3));
    CHECK(cfg->site_of(cam3)->id == "yard");
    CHECK(cfg->site_of(cam2) == nullptr);
    auto refused = [](const json& c) {
        try {
            parse_config(c);
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    json c = sites_config();
    c["accounts"]["acct1"]["devices"]["cam2"]["site"] = "moon";
    CHECK(refused(c) ==
          "config: accounts.acct1.devices.cam2.site names 'moon', which is not a site of the "
          "account");
    c = sites_config();
    c["accounts"]["acct1"]["sites"]["hq"]["armed"] = {"day"};
    CHECK(refused(c) == "config: accounts.acct1.sites.hq.armed names \"day\", which is not in "
                        "time_intervals");
    c = sites_config();
    c["time_intervals"]["night"][0]["weekdays"] = {"caturday"};
    CHECK(refused(c) == "config: time_intervals.night[0].weekdays has 'caturday', which is not "
                        "a weekday (monday, …)");
    c = sites_config();
    c["tamper"] = {{"window", -1}};
    CHECK(refused(c) == "config: tamper.window must be a non-negative number");
    c = sites_config();
    c["accounts"]["acct1"]["devices"]["cam1"]["regions"]["\u0001motion"] = json::object();
    CHECK(refused(c) == "config: accounts.acct1.devices.cam1.regions.\u0001motion has a control "
                        "character in its name");
}

TEST_CASE("sites: motion is announced only while the site is armed, by Berlin's clock across "
          "the spring change") {
    core_options o;
    o.explain = true;
    core_harness h(o, sites_config());
    // March 27, 20:59 UTC = 21:59 CET: disarmed; 21:00 UTC = 22:00 CET: armed.
    CHECK(h.run({motion("cam1", MAR28 - 3 * H - 60, "door", 1, "m1")}, MAR28 - 3 * H).empty());
    CHECK(h.stats().silenced == 1);
    REQUIRE(h.core.result().held.size() == 1);
    CHECK(std::string(h.core.result().held[0].rule) == "disarmed");
    CHECK(h.core.result().held[0].by == "hq");
    const auto armed = h.run({motion("cam1", MAR28 - 3 * H, "door", 1, "m2")}, MAR28 - 3 * H);
    REQUIRE(armed.size() == 1);
    CHECK(armed[0].type == "Alert");
    // March 28, 03:59 UTC = 05:59 CEST: armed; 04:00 UTC = 06:00 CEST: disarmed.
    CHECK(h.run({motion("cam1", MAR28 + 4 * H - 60, "door", 1, "m3")}, MAR28 + 4 * H).size() == 1);
    CHECK(h.run({motion("cam1", MAR28 + 4 * H + 60, "door", 1, "m4")}, MAR28 + 4 * H + 60).empty());
    // cam2 has no site: its motion is never disarmed.
    CHECK(h.run({motion("cam2", MAR28 + 5 * H, "lobby", 1, "m5")}, MAR28 + 5 * H).size() == 1);
    // The answer names the site.
    h.run({motion("cam1", MAR28 + 20 * H + 60, "door", 1, "m6")}, MAR28 + 20 * H + 60);
    REQUIRE(h.core.result().notifications.size() == 1);
    const json j = notification_json(h.core, h.core.result().notifications[0]);
    CHECK(j["site"] == "hq");
    CHECK(j["siteName"] == "Head office");
}

TEST_CASE("sites: quiet hours by New York's clock, the repeated hour of the autumn change armed "
          "both times") {
    json c = sites_config();
    c["time_intervals"]["late"] = hours("01:00", "02:00", "America/New_York");
    c["accounts"]["acct1"]["sites"]["hq"]["armed"] = {"late"};
    core_harness h({}, c);
    int n = 0;
    // November 7: 05:30 UTC is 01:30 EDT, 06:30 UTC is 01:30 EST, 07:00 UTC is 02:00 EST.
    for (const double t :
         {NOV07 + 5.5 * H, NOV07 + 6.5 * H, NOV07 + 7 * H, NOV07 + 4.9 * H + 86400}) {
        const auto notes = h.run({motion("cam1", t, "door", 1, "m" + std::to_string(++n))}, t);
        CAPTURE(t);
        CHECK(notes.size() == (t < NOV07 + 7 * H ? 1U : 0U));
    }
}

TEST_CASE("tamper: offline right after motion while armed is PossibleTamper at once, and its "
          "Online resolves it") {
    core_harness h({}, sites_config());
    const double night = MAR28 - 2 * H;  // 23:00 CET: armed
    CHECK(h.run({motion("cam1", night, "door", 1, "m1")}, night).size() == 1);
    const auto gone = h.run({status("cam1", night + 45, device_state::offline, "s1")}, night + 46);
    REQUIRE(gone.size() == 1);
    CHECK(gone[0].type == "PossibleTamper");
    CHECK(gone[0].event_ts == night + 45);
    CHECK(gone[0].delay == 1);
    const json t = notification_json(h.core, h.core.result().notifications[0]);
    CHECK(t["level"] == "critical");
    CHECK(t["motionTs"] == night);
    CHECK(t["threadKey"] == t["dedupKey"]);
    CHECK(h.tick(night + 400).empty());  // no Offline after the hold: it was announced
    CHECK(h.run({status("cam1", night + 500, device_state::online, "s2")}, night + 500).empty());
    const auto back = h.tick(night + 600);
    REQUIRE(back.size() == 1);
    CHECK(back[0].type == "Online");
    const json o = notification_json(h.core, h.core.result().notifications[0]);
    CHECK(o["resolves"] == t["dedupKey"]);
    CHECK(o["threadKey"] == t["dedupKey"]);
    // The next outage is an ordinary one again.
    CHECK(h.run({status("cam1", night + 700, device_state::offline, "s3")}, night + 700).empty());
    const auto plain = h.tick(night + 1000);
    REQUIRE(plain.size() == 1);
    CHECK(plain[0].type == "Offline");
}

TEST_CASE("tamper: none while disarmed, outside the window, without a site, or when turned "
          "off, and a bridge's cameras take its site") {
    const double day = MAR28 + 10 * H;   // 12:00 CEST: hq disarmed
    const double night = MAR28 - 2 * H;  // 23:00 CET: armed
    {
        core_harness h({}, sites_config());  // disarmed: the ordinary hold
        h.run({motion("cam1", day, "door", 1, "m1")}, day);
        CHECK(h.run({status("cam1", day + 10, device_state::offline, "s1")}, day + 10).empty());
        const auto later = h.tick(day + 310);
        REQUIRE(later.size() == 1);
        CHECK(later[0].type == "Offline");
    }
    {
        core_harness h({}, sites_config());  // 61 s after the motion: outside the window
        h.run({motion("cam1", night, "door", 1, "m1")}, night);
        CHECK(h.run({status("cam1", night + 61, device_state::offline)}, night + 61).empty());
    }
    {
        json c = sites_config();
        c["tamper"] = {{"window", 120}};
        core_harness h({}, c);  // the window from the config
        h.run({motion("cam1", night, "door", 1, "m1")}, night);
        CHECK(h.run({status("cam1", night + 100, device_state::offline)}, night + 100).size() == 1);
    }
    {
        json c = sites_config();
        c["tamper"] = false;
        core_harness h({}, c);
        h.run({motion("cam1", night, "door", 1, "m1")}, night);
        CHECK(h.run({status("cam1", night + 5, device_state::offline)}, night + 5).empty());
    }
    {
        core_harness h({}, sites_config());  // cam2: no site
        h.run({motion("cam2", night, "lobby", 1, "m1")}, night);
        CHECK(h.run({status("cam2", night + 5, device_state::offline)}, night + 5).empty());
    }
    {
        core_harness h({}, sites_config());  // cam3 is in its bridge's site, always armed
        h.run({motion("cam3", day, "gate", 1, "m1")}, day);
        const auto t = h.run({status("cam3", day + 5, device_state::offline)}, day + 5);
        REQUIRE(t.size() == 1);
        CHECK(t[0].type == "PossibleTamper");
    }
}

TEST_CASE("sites: a silence matches a site, and one of PossibleTamper leaves the ordinary hold, "
          "the state names the site and the tamper") {
    const double night = MAR28 - 2 * H;
    auto set = std::make_shared<silence_set>();
    set->silences.push_back(parse_silence_request(
        {{"matchers", {{"site", "hq"}, {"notifType", "PossibleTamper"}}}, {"duration", 3600}},
        night - 10, "s1"));
    set->version = "1";
    core_harness h({}, sites_config());
    h.core.set_silences(set);
    h.run({motion("cam1", night, "door", 1, "m1")}, night);  // an Alert: not matched
    CHECK(h.run({status("cam1", night + 5, device_state::offline)}, night + 5).empty());
    const auto held = h.tick(night + 305);
    REQUIRE(held.size() == 1);
    CHECK(held[0].type == "Offline");  // the hold ran, and Offline is not matched
    const std::uint32_t cam1 = h.core.find_device("acct1", "cam1");
    CHECK(json::parse(device_status_json(h.core, cam1))["site"] == "hq");
    // A site silence of every type holds back cam3's (yard's) outage, not hq's.
    auto yard = std::make_shared<silence_set>();
    yard->silences.push_back(
        parse_silence_request({{"matchers", {{"site", "yard"}}}, {"duration", 3600}}, night, "s2"));
    yard->version = "2";
    core_harness g({}, sites_config());
    g.core.set_silences(yard);
    g.run({motion("cam3", night, "gate", 1, "m1"), motion("cam1", night, "door", 1, "m2")}, night);
    CHECK(g.core.result().notifications.size() == 1);  // cam1's Alert; cam3's is silenced
    const auto tamper = g.run({status("cam3", night + 5, device_state::offline),
                               status("cam1", night + 5, device_state::offline)},
                              night + 5);
    REQUIRE(tamper.size() == 1);
    CHECK(tamper[0].device == "cam1");
    CHECK(json::parse(device_status_json(g.core, g.core.find_device("acct1", "cam1")))["tamper"] ==
          true);
}

// One stream — motion by night and by day, a tamper and its return, an ordinary outage —
// through the memory store, a state dir whose process restarts at every activation, and Redis
// shared by three containers that take the batches in turn: the same notifications, fields and
// dedupKeys.
TEST_CASE("sites: tamper and schedules decide alike in memory, a restarted state dir and Redis "
          "across 3 containers") {
    const json config = sites_config();
    const double night = MAR28 - 2 * H;
    const batch_list batches = {
        {{motion("cam1", night, "door", 1, "m1"), motion("cam3", night, "gate", 1, "m2")}, night},
        {{status("cam1", night + 30, device_state::offline, "s1")}, night + 31},
        {{status("cam3", night + 200, device_state::offline, "s2")}, night + 201},
        {{status("cam1", night + 300, device_state::online, "s3")}, night + 301},
        {{}, night + 600},
        {{motion("cam1", MAR28 + 10 * H, "door", 1, "m3")}, MAR28 + 10 * H},
        {{}, MAR28 + 10 * H + 600},
    };
    const std::multiset<std::string> memory = through_memory(config, batches);
    std::map<std::string, int> types = types_of(memory);
    CHECK(types["Alert"] == 2);           // cam1 and cam3 at night; cam1's by day is disarmed
    CHECK(types["PossibleTamper"] == 1);  // cam1, 30 s after its motion
    CHECK(types["Offline"] == 1);         // cam3, 200 s after its motion: after its hold
    CHECK(types["Online"] == 1);          // cam1's, resolving the tamper
    CHECK(through_restarted_state_dir(config, batches, "alerts-sites") == memory);
    std::multiset<std::string> shared;
    redis_server server;
    {
        redis_store_options o;
        o.url = parse_redis_url(server.url());
        std::vector<std::unique_ptr<core_harness>> cores;
        std::vector<std::unique_ptr<redis_store>> stores;
        for (int i = 0; i < 3; ++i) {
            cores.push_back(std::make_unique<core_harness>(core_options{}, config));
            stores.push_back(std::make_unique<redis_store>(o));
        }
        for (std::size_t i = 0; i < batches.size(); ++i) {
            core_harness& h = *cores[i % 3];
            for (const std::string& t : notification_texts(
                     h.core, stores[i % 3]->process(h.core, batches[i].first, batches[i].second)))
                shared.insert(t);
        }
    }
    CHECK(shared == memory);
    for (const auto& t : memory)
        if (shared.count(t) != memory.count(t)) MESSAGE("memory: " << t);
    for (const auto& t : shared)
        if (shared.count(t) != memory.count(t)) MESSAGE("redis: " << t);
}
