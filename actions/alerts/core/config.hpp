// config.hpp — the alert configuration (docs/alerts.md, "Config"), parsed once from nlohmann::json.
//
// Accounts and devices are stored in flat vectors; the decision core refers to them by index
// and re-resolves its indices whenever a different config is installed. `fingerprint` is a
// hash of the raw JSON, so an unchanged bound config is recognised without being re-parsed.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/route_tree.hpp"
#include "core/time_interval.hpp"
#include "core/types.hpp"

namespace alerts {

/// Thrown for a config that does not have the documented shape; what() names the path.
class config_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

using recipient_list = std::vector<std::string>;

/// The most labels one device may carry (docs/alerts.md, "Routing").
constexpr std::size_t MAX_DEVICE_LABELS = 64;

struct region_config {
    std::string name;
    bool enabled = true;
    double sensitivity = 0;  // a motion alert needs magnitude >= sensitivity
    std::string level = "normal";
    recipient_list recipients;  // empty: fall back to the device's, then the account's
    double cooldown = 0;        // seconds; repeats inside it are suppressed
};

struct device_config {
    std::string id;
    std::string name;
    recipient_list recipients;
    std::vector<region_config> regions;
    std::string bridge;                  // the device id of its bridge ("": none)
    std::string site_id;                 // its site as the config names it ("": its bridge's)
    std::int32_t site = -1;              // index in alert_config::sites, -1: none
    std::int32_t bridge_cfg = -1;        // index of the bridge's device config, -1: none
    std::vector<std::uint32_t> members;  // a bridge: the device configs behind it
    label_map labels;                    // what routes match on (sorted by name)

    /// The region called `name`, or nullptr.
    const region_config* find_region(std::string_view region) const;
};

/// A maintenance window (docs/alerts.md, "Maintenance windows"): [from, until).
struct maintenance_window {
    std::string device;  // "": every device of the account
    double from = 0;
    double until = 0;
};

/// A site (docs/alerts.md, "Sites and schedules"): cameras in one place, armed on a schedule.
struct site_config {
    std::string id;
    std::string name;
    // "armed": true (the default), false, or the names of the intervals it is armed in.
    bool always_armed = true;
    std::vector<std::uint32_t> armed;  // indices in alert_config::intervals
    std::uint32_t devices = 0;         // the config's devices at the site (bridges' cameras too)
    std::string group_id;              // the device id its group is kept under (records.hpp)
};

/// Site grouping (docs/alerts.md, "Grouping"): a site's first Offline waits `wait` seconds, then
/// one SiteOffline names the cameras down; later changes go out at most every `interval`.
struct group_config {
    bool enabled = false;
    double wait = 30;
    double interval = 300;
};

struct account_config {
    std::string id;
    group_config grouping;  // the config's top-level one unless the account sets its own
    std::vector<maintenance_window> maintenance;
    std::string datacenter;
    recipient_list recipients;
    std::unordered_map<std::string, std::uint32_t> devices;  // device id -> index in devices
    std::unordered_map<std::string, std::uint32_t> sites;    // site id -> index in sites
};

struct hold_times {
    double offline = 300;
    double online = 95;
    double internet_offline = 300;

    /// How long a device must stay in `s` before it is announced.
    double of(device_state s) const {
        switch (s) {
            case device_state::offline:
                return offline;
            case device_state::internet_offline:
                return internet_offline;
            case device_state::online:
                break;
        }
        return online;
    }
};

/// Flap detection: `changes` observed state changes within `window` seconds start flapping;
/// `quiet` seconds without one end it.
struct flapping_config {
    bool enabled = true;
    std::uint32_t changes = 6;
    double window = 3600;
    double quiet = 1800;
};

/// The most `flapping.changes` a config may ask for (the core keeps that many times per
/// device that changes state).
constexpr std::uint32_t MAX_FLAP_CHANGES = 64;
/// The most reminders a config may list.
constexpr std::size_t MAX_REMINDERS = 16;

/// The largest `recent_ids` a config may ask for (2^20: 24 MiB of ring and index); more is
/// a config_error, so that a hostile config cannot make the action allocate without bound.
constexpr std::size_t MAX_RECENT_IDS = std::size_t{1} << 20;

/// Tamper detection (docs/alerts.md, "Tamper"): a camera of an armed site that goes offline
/// at most `window` seconds after its last motion is announced at once as PossibleTamper.
struct tamper_config {
    bool enabled = true;
    double window = 60;
};

/// The longest site id: a site's group is kept under the device id "\x01" + the site's id.
constexpr std::size_t MAX_SITE_ID = 254;
/// The most sites, and named time intervals, one config may define.
constexpr std::size_t MAX_SITES = 1U << 20;
constexpr std::size_t MAX_TIME_INTERVALS = 1024;

struct alert_config {
    hold_times holds;
    double alert_delay_threshold = 300;
    std::size_t recent_ids = 65536;  // capacity of the recent-id ring, <= MAX_RECENT_IDS
    flapping_config flapping;
    double bridge_grace = 120;
    std::vector<double> reminders;  // StillOffline times after the Offline, ascending
    bool has_maintenance = false;   // some account has a window
    std::vector<account_config> accounts;
    std::vector<device_config> devices;
    std::vector<site_config> sites;
    std::vector<time_interval> intervals;  // the named time intervals
    tamper_config tamper;
    group_config grouping;  // the default of the accounts that set none
    route_tree routes;      // `route` and `receivers` (docs/alerts.md, "Routing"); empty: none
    std::uint64_t fingerprint = 0;

    /// The device's site, or nullptr.
    const site_config* site_of(const device_config& d) const {
        return d.site < 0 ? nullptr : &sites[static_cast<std::size_t>(d.site)];
    }
    /// Whether the site is armed at `t`.
    bool armed(const site_config& s, double t) const;
};

/// Fingerprint of a raw config value (cheap compared with parsing it).
std::uint64_t config_fingerprint(const nlohmann::json& j);

/// Parses and validates a config; throws config_error.
alert_config parse_config(const nlohmann::json& j);

}  // namespace alerts
