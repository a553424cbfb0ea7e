// types.cpp — contract names of the ETag types, device states and notification types.
#include "core/types.hpp"

namespace alerts {

std::optional<etag_type> parse_etag_type(std::string_view s) {
    if (s == "heartbeat") return etag_type::heartbeat;
    if (s == "status") return etag_type::status;
    if (s == "motion") return etag_type::motion;
    return std::nullopt;
}

std::optional<device_state> parse_device_state(std::string_view s) {
    if (s == "online") return device_state::online;
    if (s == "offline") return device_state::offline;
    if (s == "internet_offline") return device_state::internet_offline;
    return std::nullopt;
}

std::string_view name_of(etag_type t) {
    switch (t) {
        case etag_type::motion:
            return "motion";
        case etag_type::status:
            return "status";
        case etag_type::heartbeat:
            return "heartbeat";
    }
    return "?";
}

std::string_view name_of(device_state s) {
    switch (s) {
        case device_state::online:
            return "online";
        case device_state::offline:
            return "offline";
        case device_state::internet_offline:
            return "internet_offline";
    }
    return "?";
}

std::string_view name_of(notif_type t) {
    switch (t) {
        case notif_type::alert:
            return "Alert";
        case notif_type::offline:
            return "Offline";
        case notif_type::online:
            return "Online";
        case notif_type::internet_offline:
            return "InternetOffline";
        case notif_type::flapping_started:
            return "FlappingStarted";
        case notif_type::flapping_stopped:
            return "FlappingStopped";
        case notif_type::still_offline:
            return "StillOffline";
        case notif_type::possible_tamper:
            return "PossibleTamper";
        case notif_type::site_offline:
            return "SiteOffline";
        case notif_type::site_changed:
            return "SiteChanged";
        case notif_type::site_online:
            return "SiteOnline";
    }
    return "?";
}

}  // namespace alerts
