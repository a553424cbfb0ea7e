// etag.hpp — one device event ("ETag") as the decision core sees it.
//
// Strings are views into the caller's batch (the nlohmann::json value, or the generator's
// buffers): the core never copies them on the hot path and never keeps them after a call.
#pragma once

#include <string_view>

#include "core/types.hpp"

namespace alerts {

struct etag {
    std::string_view id;  // empty: no idempotence key
    std::string_view account;
    std::string_view device;
    std::string_view region;  // motion only
    double ts = 0;            // event time, epoch seconds
    double magnitude = 0;     // motion only
    etag_type type = etag_type::heartbeat;
    device_state state = device_state::online;  // status and heartbeat only
};

/// Longest account, device or region name the core accepts (longer ones are rejected).
inline constexpr std::size_t MAX_NAME_LENGTH = 255;

}  // namespace alerts
