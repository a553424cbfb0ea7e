// silences_test.cpp — silences made at run time (docs/alerts.md, "Silences"): the request's
// shape and bounds, matching, and the core holding back what they cover with a maintenance
// window's semantics (counted `silenced`, what is still down at the end announced then), an
// early end, "until resolved", and motion by region and type.
#include <limits>

#include "alert_test_util.hpp"
#include "core/device_status.hpp"
#include "core/silence.hpp"

using namespace alerts;
using namespace alerts::test;
using json = nlohmann::json;

namespace {

std::shared_ptr<const silence_set> silences_of(std::vector<json> requests, double now) {
    auto set = std::make_shared<silence_set>();
    int i = 0;
    for (const json& r : requests) {
        set->silences.push_back(parse_silence_request(r, now, "s" + std::to_string(++i)));
    }
    set->version = std::to_string(i);
    return set;
}

}  // namespace

TEST_CASE("silences: a request's shape and bounds, each refusal says which member") {
    const double now = T0;
    const json ok = {{"matchers", {{"account", "acct1"}, {"device", "cam1"}}},
                     {"duration", 1800},
                     {"comment", "re-cabling"},
                     {"createdBy", "ops"}};
    const silence s = parse_silence_request(ok, now, "id1");
    CHECK(s.starts_at == now);
    CHECK(s.ends_at == now + 1800);
    CHECK(s.comment == "re-cabling");
    const silence back = silence_from_json(silence_json(s));
    CHECK(back.ends_at == s.ends_at);
    CHECK(back.match.device == "cam1");
    CHECK(silence_json(back) == silence_json(s));

    const std::vector<std::pair<json, std::string>> bad = {
        {json::array(), "the silence must be a JSON object"},
        {{{"duration", 60}},
         "matchers must be an object (account, device, bridge, site, region, "
         "notifType)"},
        {{{"matchers", json::object()}, {"duration", 60}},
         "matchers must have at least one matcher"},
        {{{"matchers", {{"room", "x"}}}, {"duration", 60}},
         "matchers has an unknown key 'room' (known keys: account, bridge, device, notifType, "
         "region, site)"},
        {{{"matchers", {{"account", 7}}}, {"duration", 60}}, "matchers.account must be a string"},
        {{{"matchers", {{"account", std::string(300, 'a')}}}, {"duration", 60}},
         "matchers.account is over 256 bytes"},
        {{{"matchers", {{"account", "a\nb"}}}, {"duration", 60}},
         "matchers.account holds a control character"},
        {{{"matchers", {{"notifType", "Down"}}}, {"duration", 60}},
         "matchers.notifType must be one of Alert, Offline, Online, InternetOffline, "
         "FlappingStarted, FlappingStopped, StillOffline, PossibleTamper"},
        {{{"matchers", {{"account", "a"}}}}, "give one of endsAt, duration or untilResolved"},
        {{{"matchers", {{"account", "a"}}}, {"duration", 60}, {"endsAt", now + 60}},
         "give one of endsAt, duration or untilResolved"},
        {{{"matchers", {{"account", "a"}}}, {"duration", -1}},
         "duration must be a positive number of seconds"},
        {{{"matchers", {{"account", "a"}}}, {"endsAt", now - 10}, {"startsAt", now - 20}},
         "endsAt is in the past"},
        {{{"matchers", {{"account", "a"}}}, {"endsAt", now + 10}, {"startsAt", now + 20}},
         "endsAt must be after startsAt"},
        {{{"matchers", {{"account", "a"}}}, {"duration", 400 * 86400}},
         "a silence may last at most 366 days, starting within 366 days"},
        {{{"matchers", {{"account", "a"}}}, {"untilResolved", true}},
         "untilResolved needs matchers.account and matchers.device (it ends when that device "
         "is back online)"},
        {{{"matchers", {{"account", "a"}}}, {"duration", 60}, {"who", "x"}},
         "unknown key 'who' (known keys: comment, createdBy, duration, endsAt, matchers, "
         "startsAt, untilResolved)"},
        {{{"matchers", {{"account", "a"}}}, {"startsAt", "now"}, {"duration", 60}},
         "startsAt must be seconds since the epoch"},
        {{{"matchers", {{"account", "a"}}}, {"duration", 60}, {"comment", std::string(2000, 'c')}},
         "comment is over 1024 bytes"},
    };
    for (const auto& [request, message] : bad) {
        CAPTURE(request.dump());
        CHECK_THROWS_WITH_AS(parse_silence_request(request, now, "x"), message.c_str(),
                             silence_error);
    }
    CHECK_THROWS_AS(silence_from_json(json{{"id", "x"}}), silence_error);
}

TEST_CASE("silences: an Offline inside a silence is held back to its end and announced then") {
    core_harness h;
    h.core.set_silences(silences_of(
        {{{"matchers", {{"account", "acct1"}, {"device", "cam1"}}}, {"duration", 3600}}}, T0));
    h.run({status("cam1", T0 + 10, device_state::offline),
           status("cam2", T0 + 10, device_state::offline)},
          T0 + 10);
    const auto at_hold = h.tick(T0 + 320);
    REQUIRE(at_hold.size() == 1);  // cam2's Offline: the silence is cam1's only
    CHECK(at_hold[0].device == "cam2");
    CHECK(h.stats().silenced == 1);
    CHECK(h.tick(T0 + 3599).empty());
    const auto at_end = h.tick(T0 + 3600);
    REQUIRE(at_end.size() == 1);
    CHECK(at_end[0].type == "Offline");
    CHECK(at_end[0].device == "cam1");
    CHECK(at_end[0].delay == 0);  // measured from the silence's end
}

TEST_CASE("silences: ended early, what it held back is announced from the next batch") {
    core_harness h;
    json request = {{"matchers", {{"account", "acct1"}}}, {"duration", 3600}};
    h.core.set_silences(silences_of({request}, T0));
    h.run({status("cam1", T0, device_state::offline)}, T0);
    CHECK(h.tick(T0 + 400).empty());
    // Expired at T0 + 1000: the same silence with its end.
    auto ended = std::make_shared<silence_set>(*h.core.silences());
    ended->silences[0].expired_at = T0 + 1000;
    ended->silences[0].ended_by = "expired";
    ended->version = "2";
    h.core.set_silences(ended);
    const auto notes = h.tick(T0 + 1001);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Offline");
    CHECK(notes[0].delay == doctest::Approx(1));
}

TEST_CASE("silences: until resolved holds a device's outage, its Online is sent and ends it") {
    core_harness h;
    // The Offline went out before the silence: the reminders are held, the Online is not.
    json c = sample_config();
    c["reminders"] = {{"offline", {600, 1200}}};
    h.core.set_config(make_config(c));
    h.run({status("cam1", T0, device_state::offline)}, T0);
    REQUIRE(h.tick(T0 + 300).size() == 1);
    h.core.set_silences(silences_of(
        {{{"matchers", {{"account", "acct1"}, {"device", "cam1"}}}, {"untilResolved", true}}},
        T0 + 400));
    CHECK(h.tick(T0 + 300 + 600).empty());  // the first reminder: silenced
    CHECK(h.stats().silenced == 1);
    CHECK(h.core.result().resolved_silences.empty());
    h.run({status("cam1", T0 + 1000, device_state::online)}, T0 + 1000);
    CHECK(h.core.result().resolved_silences == std::vector<std::string>{"s1"});
    const auto back = h.tick(T0 + 1095);
    REQUIRE(back.size() == 1);
    CHECK(back[0].type == "Online");

    // A second device, silenced before its Offline: nothing at all, and the Online that would
    // follow is no Online (it was never announced offline): the silence ends with its return.
    h.run({status("cam2", T0 + 2000, device_state::offline)}, T0 + 2000);
    h.core.set_silences(silences_of(
        {{{"matchers", {{"account", "acct1"}, {"device", "cam2"}}}, {"untilResolved", true}}},
        T0 + 2000));
    CHECK(h.tick(T0 + 2400).empty());
    CHECK(h.tick(T0 + 90000).empty());
    h.run({status("cam2", T0 + 90001, device_state::online)}, T0 + 90001);
    CHECK(h.core.result().resolved_silences == std::vector<std::string>{"s1"});
    CHECK(h.tick(T0 + 91000).empty());
}

TEST_CASE("silences: motion by region and notifType, and a future silence holds nothing yet") {
    core_harness h;
    h.core.set_silences(silences_of(
        {{{"matchers", {{"region", "door"}, {"notifType", "Alert"}}}, {"duration", 600}},
         {{"matchers", {{"device", "cam1"}}}, {"startsAt", T0 + 5000}, {"duration", 600}}},
        T0));
    CHECK(h.run({motion("cam1", T0 + 1, "door", 0.9, "m1")}, T0 + 1).empty());
    CHECK(h.stats().silenced == 1);
    CHECK(h.run({motion("cam1", T0 + 2, "yard", 0.9, "m2")}, T0 + 2).size() == 1);
    CHECK(h.run({motion("cam1", T0 + 700, "door", 0.9, "m3")}, T0 + 700).size() == 1);
    CHECK(h.run({motion("cam1", T0 + 5001, "yard", 0.9, "m4")}, T0 + 5001).empty());
    // notifType Offline leaves the Online of an earlier outage alone.
    core_harness k;
    k.run({status("cam2", T0, device_state::offline)}, T0);
    REQUIRE(k.tick(T0 + 300).size() == 1);
    k.core.set_silences(
        silences_of({{{"matchers", {{"notifType", "Offline"}}}, {"duration", 3600}}}, T0 + 300));
    k.run({status("cam2", T0 + 400, device_state::online)}, T0 + 400);
    CHECK(k.tick(T0 + 495).size() == 1);
}

TEST_CASE("the console's state and explanations of a device whose id is not UTF-8 are JSON text, "
          "the bytes replaced (never an exception that fails the commit)") {
    core_options o;
    o.explain = true;
    json c = sample_config();
    c["accounts"]["acct1"]["devices"]["cam\xff"] = json::object();
    core_harness h(o);
    h.run({status("cam\xff", T0, device_state::offline)}, T0);
    h.run({status("cam\xff", T0 + 10, device_state::online)}, T0 + 10);  // back inside its hold
    const std::uint32_t d = h.core.find_device("acct1", "cam\xff");
    REQUIRE(d != string_interner::npos);
    REQUIRE(h.core.result().held.size() == 1);
    const json held = json::parse(held_back_json(h.core, h.core.result().held[0]));
    CHECK(held["rule"] == "hold");
    CHECK(held["device"] == "cam\xef\xbf\xbd");
    h.run({status("cam\xff", T0 + 20, device_state::offline)}, T0 + 20);
    CHECK(json::parse(device_status_json(h.core, d))["pending"] == true);
}
