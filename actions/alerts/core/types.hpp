// types.hpp — the small vocabulary of the alert pipeline: ETag types, device states,
// notification types, and their contract names (docs/alerts.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace alerts {

/// What an ETag reports.
enum class etag_type : std::uint8_t { motion, status, heartbeat };

/// A device's connectivity. `online` is also the presumed state of a device never seen.
enum class device_state : std::uint8_t { online, offline, internet_offline };

/// What a notification announces.
enum class notif_type : std::uint8_t {
    alert,
    offline,
    online,
    internet_offline,
    flapping_started,  // docs/alerts.md, "Flapping"
    flapping_stopped,
    still_offline,    // a reminder
    possible_tamper,  // docs/alerts.md, "Tamper": offline right after motion, while armed
    site_offline,     // docs/alerts.md, "Grouping": a site's cameras went down, as one group
    site_changed,     // more of its cameras went down or came back (batched)
    site_online,      // all of them are back: the group is closed
};

std::optional<etag_type> parse_etag_type(std::string_view s);
std::optional<device_state> parse_device_state(std::string_view s);

std::string_view name_of(etag_type t);
std::string_view name_of(device_state s);
/// The contract names: "Alert", "Offline", "Online", "InternetOffline", "FlappingStarted",
/// "FlappingStopped", "StillOffline", "PossibleTamper", "SiteOffline", "SiteChanged",
/// "SiteOnline".
std::string_view name_of(notif_type t);

/// Whether the notification is about a site's group rather than one device.
inline bool is_site_notif(notif_type t) {
    return t == notif_type::site_offline || t == notif_type::site_changed ||
           t == notif_type::site_online;
}

/// The state notification that announces a device having settled in state `s`.
inline notif_type notif_for(device_state s) {
    switch (s) {
        case device_state::offline:
            return notif_type::offline;
        case device_state::internet_offline:
            return notif_type::internet_offline;
        case device_state::online:
            break;
    }
    return notif_type::online;
}

}  // namespace alerts
