// device_status.hpp — what alertgw's console shows of a device now and of what the rules held
// back (docs/alerts.md, "State and explanations"), as the JSON the Redis store keeps for it.
// Pure: read from the core after a batch.
#pragma once

#include <cstdint>
#include <string>

#include "core/alert_core.hpp"

namespace alerts {

/// Whether the device is worth a line in "state now": announced down, a hold pending,
/// flapping, held back by a window or a silence, or waiting on its bridge.
bool device_notable(const device_slot& d);

/// {"account","device","name"?,"state","announced","since","pending"?,"holdSince"?,
///  "flapping"?,"silenced"?,"heldBy"?,"inhibited"?,"bridge"?}: since = when the announced state
/// began (a device announced down) or when the pending change began.
std::string device_status_json(const alert_core& core, std::uint32_t device);

/// {"ts","eventTs","notifType","rule","by"?,"detail"} of one held-back notification.
std::string held_back_json(const alert_core& core, const held_back& h);

}  // namespace alerts
