// state_rules_test.cpp — holds, flaps, Online only after a sent Offline, heartbeats, missed
// state changes, internet_offline, and timers maturing on ticks.
#include "alert_test_util.hpp"

using namespace alerts;
using namespace alerts::test;

TEST_CASE("an offline device is announced once the offline hold has passed") {
    core_harness h;
    CHECK(h.run({status("cam1", T0, device_state::offline)}, T0 + 1).empty());
    CHECK(h.stats().pending == 1);
    CHECK(h.tick(T0 + 299).empty());
    auto notes = h.tick(T0 + 310);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Offline");
    CHECK(notes[0].account == "acct1");
    CHECK(notes[0].device == "cam1");
    CHECK(notes[0].event_ts == T0);
    CHECK(notes[0].publish_ts == T0 + 310);
    CHECK(notes[0].delay == doctest::Approx(10));
    CHECK(notes[0].recipients == std::vector<std::string>{"cam1@a1"});
    CHECK(h.stats().pending == 0);
    CHECK(h.tick(T0 + 1000).empty());
}

TEST_CASE("a flap inside the offline hold sends nothing") {
    core_harness h;
    h.run({status("cam1", T0, device_state::offline)}, T0);
    CHECK(h.run({status("cam1", T0 + 60, device_state::online)}, T0 + 60).empty());
    CHECK(h.stats().pending == 0);
    CHECK(h.tick(T0 + 1000).empty());
}

TEST_CASE("Online is sent only after a sent Offline, once the online hold has passed") {
    core_harness h;
    h.run({status("cam1", T0, device_state::offline)}, T0);
    REQUIRE(h.tick(T0 + 300).size() == 1);
    CHECK(h.run({status("cam1", T0 + 400, device_state::online)}, T0 + 400).empty());
    CHECK(h.tick(T0 + 494).empty());
    auto notes = h.tick(T0 + 495);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Online");
    CHECK(notes[0].event_ts == T0 + 400);
    CHECK(notes[0].delay == doctest::Approx(0));
}

TEST_CASE("a device never announced offline gets no Online") {
    core_harness h;
    CHECK(h.run({status("cam1", T0, device_state::online)}, T0).empty());
    CHECK(h.tick(T0 + 1000).empty());
    CHECK(h.stats().pending == 0);
}

TEST_CASE("going offline again inside the online hold keeps the device announced offline") {
    core_harness h;
    h.run({status("cam1", T0, device_state::offline)}, T0);
    REQUIRE(h.tick(T0 + 300).size() == 1);
    h.run({status("cam1", T0 + 400, device_state::online)}, T0 + 400);
    CHECK(h.run({status("cam1", T0 + 450, device_state::offline)}, T0 + 450).empty());
    CHECK(h.tick(T0 + 2000).empty());  // no second Offline, no Online
}

TEST_CASE("same-state heartbeats are ignored and keep a hold running") {
    core_harness h;
    CHECK(h.run({heartbeat("cam1", T0, device_state::online),
                 heartbeat("cam1", T0 + 30, device_state::online)},
                T0 + 31)
              .empty());
    CHECK(h.stats().heartbeats == 2);
    CHECK(h.stats().ignored == 2);
    h.run({status("cam1", T0 + 40, device_state::offline)}, T0 + 41);
    h.run({heartbeat("cam1", T0 + 70, device_state::offline)}, T0 + 71);
    CHECK(h.stats().ignored == 1);
    auto notes = h.tick(T0 + 340);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].event_ts == T0 + 40);  // the original event time, not the heartbeat's
}

TEST_CASE("a heartbeat with a different state is a missed state change") {
    core_harness h;
    h.run({heartbeat("cam1", T0, device_state::online)}, T0);
    h.run({heartbeat("cam1", T0 + 30, device_state::offline)}, T0 + 30);
    CHECK(h.stats().ignored == 0);
    CHECK(h.stats().pending == 1);
    auto notes = h.tick(T0 + 330);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Offline");
    CHECK(notes[0].event_ts == T0 + 30);
}

TEST_CASE("internet_offline has its own hold and notification type") {
    nlohmann::json cfg = sample_config();
    cfg["holds"]["internet_offline"] = 120;
    core_harness h({}, cfg);
    h.run({status("cam1", T0, device_state::internet_offline)}, T0);
    auto notes = h.tick(T0 + 120);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "InternetOffline");
    h.run({status("cam1", T0 + 200, device_state::online)}, T0 + 200);
    notes = h.tick(T0 + 295);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Online");
}

TEST_CASE("a hold due before a later event in the same batch matures first") {
    core_harness h;
    auto notes = h.run(
        {status("cam1", T0, device_state::offline), status("cam1", T0 + 400, device_state::online)},
        T0 + 401);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Offline");
    CHECK(notes[0].delay == doctest::Approx(101));
    CHECK(h.stats().pending == 1);  // the online hold
}

TEST_CASE("a tick matures only the holds that are due") {
    core_harness h;
    h.run({status("cam1", T0, device_state::offline),
           status("cam2", T0 + 100, device_state::offline)},
          T0 + 100);
    auto notes = h.tick(T0 + 350);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].device == "cam1");
    CHECK(h.stats().pending == 1);
    notes = h.tick(T0 + 400);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].device == "cam2");
}

TEST_CASE("a device absent from its account's config still gets state notifications") {
    core_harness h;
    h.run({status("cam9", T0, device_state::offline)}, T0);
    auto notes = h.tick(T0 + 300);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].recipients == std::vector<std::string>{"ops@a1"});
}

TEST_CASE("a notification later than the threshold is flagged late and counted") {
    core_harness h;
    h.run({status("cam1", T0, device_state::offline)}, T0);
    auto notes = h.tick(T0 + 300 + 301);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].late);
    CHECK(h.stats().late == 1);
    CHECK(h.stats().alert_delay.max == doctest::Approx(301));
}

TEST_CASE("alertDelay max and p50 summarise the activation's notifications") {
    core_harness h;
    h.run(
        {status("cam1", T0, device_state::offline), status("cam2", T0 + 10, device_state::offline),
         status("cam3", T0 + 20, device_state::offline)},
        T0 + 20);
    h.tick(T0 + 330);
    CHECK(h.stats().alert_delay.max == doctest::Approx(30));
    CHECK(h.stats().alert_delay.p50 == doctest::Approx(20));
}
