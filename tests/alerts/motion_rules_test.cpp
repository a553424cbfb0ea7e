// motion_rules_test.cpp — motion alerts: known enabled regions, sensitivity, per-region
// cooldown (suppressed counted), recipients region -> device -> account, level.
#include "alert_test_util.hpp"

using namespace alerts;
using namespace alerts::test;

TEST_CASE("motion in a known enabled region reaching its sensitivity alerts at once") {
    core_harness h;
    auto notes = h.run({motion("cam1", T0, "door", 0.8)}, T0 + 0.004);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].type == "Alert");
    CHECK(notes[0].region == "door");
    CHECK(notes[0].event_ts == T0);
    CHECK(notes[0].delay == doctest::Approx(0.004));
    CHECK(h.core.result().notifications[0].region->level == "high");
}

TEST_CASE("motion below sensitivity, in unknown or disabled regions, is ignored") {
    core_harness h;
    CHECK(h.run({motion("cam1", T0, "door", 0.4), motion("cam1", T0 + 1, "nowhere", 1),
                 motion("cam1", T0 + 2, "off", 1)},
                T0 + 3)
              .empty());
    CHECK(h.stats().ignored == 3);
}

TEST_CASE("magnitude equal to the sensitivity reaches it") {
    core_harness h;
    CHECK(h.run({motion("cam1", T0, "door", 0.5)}, T0).size() == 1);
}

TEST_CASE("a device absent from the config gets no motion alerts") {
    core_harness h;
    CHECK(h.run({motion("cam9", T0, "door", 1)}, T0).empty());
    CHECK(h.stats().ignored == 1);
}

TEST_CASE("repeats within the region's cooldown are suppressed and counted") {
    core_harness h;
    CHECK(h.run({motion("cam1", T0, "door", 0.9)}, T0).size() == 1);
    CHECK(
        h.run({motion("cam1", T0 + 30, "door", 0.9), motion("cam1", T0 + 59, "door", 0.9)}, T0 + 59)
            .empty());
    CHECK(h.stats().suppressed == 2);
    CHECK(h.run({motion("cam1", T0 + 60, "door", 0.9)}, T0 + 60).size() == 1);
}

TEST_CASE("the cooldown is per region") {
    core_harness h;
    auto notes =
        h.run({motion("cam1", T0, "door", 0.9), motion("cam1", T0 + 1, "yard", 0.9)}, T0 + 1);
    CHECK(notes.size() == 2);
    CHECK(h.stats().suppressed == 0);
}

TEST_CASE("recipients fall back region -> device -> account") {
    nlohmann::json cfg = sample_config();
    cfg["accounts"]["acct1"]["devices"]["cam3"] = {
        {"regions", {{"hall", nlohmann::json::object()}}}};
    core_harness h({}, cfg);
    auto notes = h.run({motion("cam1", T0, "door", 0.9), motion("cam1", T0 + 1, "yard", 0.9),
                        motion("cam3", T0, "hall", 0.9)},
                       T0 + 2);
    REQUIRE(notes.size() == 3);
    CHECK(notes[0].recipients == std::vector<std::string>{"guard@a1"});
    CHECK(notes[1].recipients == std::vector<std::string>{"cam1@a1"});
    CHECK(notes[2].recipients == std::vector<std::string>{"ops@a1"});
}
