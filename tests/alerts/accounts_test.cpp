// accounts_test.cpp — data center filter (foreign), unknown accounts, the per-action routing
// of ETag types, and config changes.
#include "alert_test_util.hpp"

using namespace alerts;
using namespace alerts::test;

TEST_CASE("EEN_AGENT_DATACENTER skips other data centers' accounts as foreign") {
    core_options o;
    o.datacenter = "c001";
    core_harness h(o);
    h.run({status("cam1", T0, device_state::offline),
           status("d1", T0, device_state::offline, {}, "acct2")},
          T0);
    CHECK(h.stats().foreign == 1);
    CHECK(h.stats().pending == 1);
    CHECK(h.stats().devices == 1);
}

TEST_CASE("without a data center filter every configured account is served") {
    core_harness h;
    h.run({status("d1", T0, device_state::offline, {}, "acct2")}, T0);
    auto notes = h.tick(T0 + 300);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].recipients == std::vector<std::string>{"ops@a2"});
}

TEST_CASE("ETags of accounts absent from the config are unknown and create no state") {
    core_harness h;
    h.run({status("x", T0, device_state::offline, {}, "nobody"),
           motion("y", T0, "door", 1, {}, "nobody")},
          T0);
    CHECK(h.stats().unknown == 2);
    CHECK(h.stats().devices == 0);
}

TEST_CASE("the motion action ignores state ETags and the state action motion ETags") {
    core_options motion_only;
    motion_only.state = false;
    core_harness m(motion_only);
    CHECK(m.run({status("cam1", T0, device_state::offline), motion("cam1", T0, "door", 1)}, T0)
              .size() == 1);
    CHECK(m.stats().ignored == 1);
    CHECK(m.stats().pending == 0);

    core_options state_only;
    state_only.motion = false;
    core_harness s(state_only);
    CHECK(s.run({status("cam1", T0, device_state::offline), motion("cam1", T0, "door", 1)}, T0)
              .empty());
    CHECK(s.stats().ignored == 1);
    CHECK(s.stats().pending == 1);
}

TEST_CASE("an unchanged config is not re-installed, a changed one re-binds devices") {
    core_harness h;
    const alert_config* before = h.core.config();
    h.core.set_config(make_config());
    CHECK(h.core.config() == before);

    h.run({status("cam1", T0, device_state::offline)}, T0);
    nlohmann::json cfg = sample_config();
    cfg["holds"]["offline"] = 60;
    cfg["accounts"]["acct1"]["recipients"] = {"new@a1"};
    cfg["accounts"]["acct1"]["devices"].erase("cam1");
    h.core.set_config(make_config(cfg));
    CHECK(h.core.config() != before);
    auto notes = h.tick(T0 + 60);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].recipients == std::vector<std::string>{"new@a1"});
}

TEST_CASE("a config without accounts or with wrong types is refused with its path") {
    CHECK_THROWS_WITH_AS(parse_config(nlohmann::json::object()), "config: missing 'accounts'",
                         config_error);
    nlohmann::json cfg = sample_config();
    cfg["holds"]["offline"] = "long";
    CHECK_THROWS_WITH_AS(parse_config(cfg), "config: holds.offline must be a non-negative number",
                         config_error);
    cfg = sample_config();
    cfg["accounts"]["acct1"]["devices"]["cam1"]["regions"]["door"]["enabled"] = 1;
    CHECK_THROWS_AS(parse_config(cfg), config_error);
}

TEST_CASE("the config fingerprint tells changed configs apart") {
    nlohmann::json a = sample_config();
    nlohmann::json b = sample_config();
    CHECK(config_fingerprint(a) == config_fingerprint(b));
    b["alert_delay_threshold"] = 10;
    CHECK(config_fingerprint(a) != config_fingerprint(b));
}
