// config_reference_test.cpp — the config keys of docs/alerts.md "Config reference" are the only
// ones accepted (a misspelt key is an error naming where it is), and alertDelay is rounded to
// milliseconds in the answer and in the log line alike.
#include <sstream>

#include "alert_test_util.hpp"
#include "runtime/alert_service.hpp"

using namespace alerts;
using namespace alerts::test;
using json = nlohmann::json;

TEST_CASE("a misspelt or unknown config key is an error that names it, at every level") {
    CHECK_NOTHROW(parse_config(sample_config()));
    const struct {
        const char* pointer;
        const char* key;
        const char* message;
    } cases[] = {
        {"", "hold",
         "config: config has an unknown key 'hold' (known keys: holds, "
         "alert_delay_threshold, recent_ids, accounts, flapping, bridge_grace, maintenance, "
         "reminders, time_intervals, tamper, grouping, receivers, route)"},
        {"/holds", "ofline",
         "config: holds has an unknown key 'ofline' (known keys: offline, "
         "online, internet_offline)"},
        {"/accounts/acct1", "datacentre",
         "config: accounts.acct1 has an unknown key "
         "'datacentre' (known keys: datacenter, recipients, "
         "devices, sites, grouping)"},
        {"/accounts/acct1/devices/cam1", "recipient",
         "config: accounts.acct1.devices.cam1 has an unknown key 'recipient' (known keys: name, "
         "recipients, regions, bridge, site, labels)"},
        {"/accounts/acct1/devices/cam1/regions/door", "sensitivty",
         "config: accounts.acct1.devices.cam1.regions.door has an unknown key 'sensitivty' "
         "(known keys: enabled, sensitivity, level, recipients, cooldown)"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.key);
        json config = sample_config();
        config[json::json_pointer(c.pointer)][c.key] = 1;
        CHECK_THROWS_WITH_AS(parse_config(config), c.message, config_error);
    }
}

TEST_CASE("alertDelay is rounded to milliseconds in the JSON and the log line") {
    alert_service svc(action_kind::monitor, {});
    std::ostringstream log;
    // 1764460800.4 - 1764460800.1 is 0.2999999523162842 in doubles.
    const json etags = json::parse(R"([{"account": "acct1", "device": "cam1", "type": "motion",
        "ts": 1764460800.1, "region": "door", "magnitude": 0.8}])");
    const json out = run_activation(
        svc, json{{"etags", etags}, {"now", 1764460800.4}, {"config", sample_config()}}, 0, log);
    REQUIRE(out["notifications"].size() == 1);
    CHECK(out["notifications"][0]["alertDelay"].dump() == "0.3");
    CHECK(out["stats"]["alertDelay"].dump() == R"({"max":0.3,"p50":0.3})");
    CHECK(log.str().find(" alertDelay=0.300 ") != std::string::npos);
}
