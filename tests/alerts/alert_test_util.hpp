// alert_test_util.hpp — builders for configs and ETags, and a core wrapper for the unit tests.
#pragma once

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/alert_core.hpp"
#include "runtime/alert_service.hpp"

namespace alerts::test {

inline constexpr double T0 = 1764460800;

/// acct1 (c001): cam1 with regions door/yard/off and its own recipients; cam2 with region
/// lobby; acct2 (c002) with no devices listed.
inline nlohmann::json sample_config() {
    return nlohmann::json::parse(R"({
      "holds": {"offline": 300, "online": 95, "internet_offline": 300},
      "alert_delay_threshold": 300,
      "accounts": {
        "acct1": {"datacenter": "c001", "recipients": ["ops@a1"],
          "devices": {
            "cam1": {"name": "Front door", "recipients": ["cam1@a1"],
              "regions": {
                "door": {"sensitivity": 0.5, "level": "high", "recipients": ["guard@a1"],
                         "cooldown": 60},
                "yard": {"sensitivity": 0.2},
                "off": {"enabled": false}}},
            "cam2": {"regions": {"lobby": {}}}}},
        "acct2": {"datacenter": "c002", "recipients": ["ops@a2"]}}})");
}

/// One activation through the service as the actions run it: `value` goes in as JSON text
/// (parsed by batch_text), the answer comes back parsed.
inline nlohmann::json run_activation(alert_service& svc, const nlohmann::json& value,
                                     double wall_now, std::ostream& log) {
    std::string answer;
    svc.run_text(value.dump(), wall_now, log, answer);
    return nlohmann::json::parse(answer);
}

inline std::shared_ptr<const alert_config> make_config(const nlohmann::json& j = sample_config()) {
    return std::make_shared<const alert_config>(parse_config(j));
}

inline etag state_etag(etag_type type, std::string_view device, double ts, device_state s,
                       std::string_view id = {}, std::string_view account = "acct1") {
    etag e;
    e.type = type;
    e.account = account;
    e.device = device;
    e.ts = ts;
    e.state = s;
    e.id = id;
    return e;
}

inline etag status(std::string_view device, double ts, device_state s, std::string_view id = {},
                   std::string_view account = "acct1") {
    return state_etag(etag_type::status, device, ts, s, id, account);
}

inline etag heartbeat(std::string_view device, double ts, device_state s, std::string_view id = {},
                      std::string_view account = "acct1") {
    return state_etag(etag_type::heartbeat, device, ts, s, id, account);
}

inline etag motion(std::string_view device, double ts, std::string_view region, double magnitude,
                   std::string_view id = {}, std::string_view account = "acct1") {
    etag e;
    e.type = etag_type::motion;
    e.account = account;
    e.device = device;
    e.ts = ts;
    e.region = region;
    e.magnitude = magnitude;
    e.id = id;
    return e;
}

/// A notification with its names resolved, for easy checks.
struct note {
    std::string type;
    std::string account;
    std::string device;
    std::string region;
    std::vector<std::string> recipients;
    double event_ts;
    double publish_ts;
    double delay;
    bool late;
};

class core_harness {
public:
    explicit core_harness(core_options options = {}, const nlohmann::json& config = sample_config())
        : core(std::move(options)) {
        core.set_config(make_config(config));
    }

    std::vector<note> run(const std::vector<etag>& batch, double now) {
        const batch_result& r = core.process(batch, now);
        std::vector<note> out;
        for (const notification& n : r.notifications) {
            out.push_back({std::string(name_of(n.type)), std::string(core.account_id(n.account)),
                           std::string(core.device_id(n.device)),
                           n.region ? n.region->name : std::string(), *n.recipients, n.event_ts,
                           n.publish_ts, n.delay, n.late});
        }
        return out;
    }
    std::vector<note> tick(double now) { return run({}, now); }
    const batch_stats& stats() const { return core.result().stats; }

    alert_core core;
};

}  // namespace alerts::test
