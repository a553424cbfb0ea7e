// records.hpp — the persistent part of the core's state, as flat records a state store
// writes and reads back. Views point into the core (when exporting) or into the store's
// buffer (when restoring) and are only valid during the call that hands them over.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "core/types.hpp"

namespace alerts {

/// A site's group is kept as a device of the site's account whose id is this mark followed by
/// the site's id (docs/alerts.md, "Grouping"): every store keeps it as it keeps a device. No
/// ETag may name such a device (etag_fields.cpp).
inline constexpr char GROUP_ID_MARK = '\x01';

inline bool is_group_id(std::string_view device) {
    return !device.empty() && device[0] == GROUP_ID_MARK;
}

inline std::string group_device_id(std::string_view site) {
    std::string id(1, GROUP_ID_MARK);
    id.append(site);
    return id;
}

/// One change of a site's group not yet announced (docs/alerts.md, "Grouping"): a camera of the
/// site went down (`down`) or came back at `ts`.
struct group_change_view {
    std::string_view device;
    double ts = 0;
    bool down = true;
};

/// A site group's state beyond its slot (device_record::group; docs/alerts.md, "Grouping").
struct group_record {
    std::uint32_t down = 0;     // the site's cameras announced down through the group
    std::uint32_t updates = 0;  // SiteChanged notifications sent
    double last_sent = 0;       // when its last notification went out
    const group_change_view* changes = nullptr;  // not yet announced, in the order they came
    std::uint32_t change_count = 0;
};

struct device_record {
    std::string_view account;
    std::string_view device;
    device_state state = device_state::online;
    device_state notified = device_state::online;
    double hold_ts = 0;
    double last_ts = 0;
    std::uint32_t last_id = 0;
    // When the announced state began (device_slot::notified_ts); NaN: not in the record (an
    // older version's), then taken as hold_ts when no hold is pending (it is that time then).
    double notified_ts = std::numeric_limits<double>::quiet_NaN();
    // The noise rules' state (docs/alerts.md, "Flapping", "Bridges", "Maintenance windows",
    // "Reminders"); all zero for most devices, and for records of older versions.
    std::uint8_t noise = 0;  // NOISE_* bits of device_machine.hpp
    std::uint32_t reminders_sent = 0;
    double reminder_base = 0;         // publishTs of the Offline the reminders follow
    const double* changes = nullptr;  // recent observed state changes, oldest first
    std::uint32_t change_count = 0;
    // A site's group (its device id is group_device_id(site)): its state; nullptr for a device.
    const group_record* group = nullptr;
};

struct cooldown_record {
    std::string_view account;
    std::string_view device;
    std::string_view region;
    double last_alert = 0;
};

/// Receives records; a state store implements it to save, the core to restore.
class record_sink {
public:
    virtual ~record_sink() = default;
    virtual void on_device(const device_record& r) = 0;
    virtual void on_cooldown(const cooldown_record& r) = 0;
    virtual void on_id(std::uint64_t id_hash) = 0;
};

}  // namespace alerts
