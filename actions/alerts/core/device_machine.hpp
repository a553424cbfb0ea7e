// device_machine.hpp — the per-device state machine, as pure functions over a compact slot.
//
// A device has an observed state (`state`, the last one applied) and an announced state
// (`notified`, the last one sent to people; `online` for a device never announced). A hold is
// pending exactly when they differ: it started at `hold_ts` and matures hold(state) seconds
// later, when `state` becomes the announced one. Coming back to the announced state before
// then cancels the hold without a word (a flap). Hence `Online` only ever follows a sent
// `Offline`/`InternetOffline`.
#pragma once

#include <cstdint>
#include <limits>

#include "core/config.hpp"
#include "core/types.hpp"

namespace alerts {

/// Everything the core keeps per device: 40 bytes (a static_assert below keeps it so: with
/// hundreds of thousands of devices and a vector's growth slack, every byte here counts about
/// 1.7 times per device).
struct device_slot {
    double last_ts = -std::numeric_limits<double>::infinity();  // stale horizon (docs/alerts.md)
    double hold_ts = 0;  // when the pending hold started (meaningful while pending)
    // When the announced state began: the eventTs of the last state notification sent (what an
    // Online's `resolves` names); NaN when unknown (a record of an older version, see
    // alert_core::restore_device).
    double notified_ts = std::numeric_limits<double>::quiet_NaN();
    std::uint32_t account = 0;  // index in the core's account table
    std::uint32_t last_id = 0;  // short hash of that event's id (0: none)
    std::int32_t cfg = -1;      // index of the device's config, -1 when not configured
    // Bumped whenever a hold starts or ends (lazy timer deletion, timer_heap.hpp). It wraps: a
    // stale timer taken for a current one after 256 bumps only makes service() look at the
    // device once more, and it does only what is due then.
    std::uint8_t hold_gen = 0;
    device_state state = device_state::online;
    device_state notified = device_state::online;
    std::uint8_t flags = 0;  // DIRTY: changed in this activation
};

static_assert(sizeof(device_slot) == 40, "device_slot grew: see its comment");

inline constexpr std::uint8_t SLOT_DIRTY = 1;
// The noise rules' persistent bits (device_record::noise holds them as they are).
inline constexpr std::uint8_t SLOT_FLAPPING = 2;   // flapping: no state notifications
inline constexpr std::uint8_t SLOT_SILENCED = 4;   // the pending hold matured inside a window
inline constexpr std::uint8_t SLOT_INHIBITED = 8;  // the pending Offline waits on the bridge
inline constexpr std::uint8_t SLOT_REMIND = 16;    // StillOffline reminders are scheduled
inline constexpr std::uint8_t SLOT_TAMPER = 32;    // the outage was announced as PossibleTamper
// Grouping (docs/alerts.md, "Grouping"): the slot is a site's group, not a device (its id is
// "\x01" + the site's id); a camera whose outage was announced through its site's group.
inline constexpr std::uint8_t SLOT_GROUP = 64;
inline constexpr std::uint8_t SLOT_GROUPED = 128;
inline constexpr std::uint8_t SLOT_NOISE_BITS = SLOT_FLAPPING | SLOT_SILENCED | SLOT_INHIBITED |
                                                SLOT_REMIND | SLOT_TAMPER | SLOT_GROUP |
                                                SLOT_GROUPED;

/// What applying an observed state did.
enum class state_effect : std::uint8_t { none, hold_started, hold_restarted, flap };

inline bool hold_pending(const device_slot& d) { return d.state != d.notified; }

/// When the pending hold of `d` matures.
inline double hold_due(const device_slot& d, const hold_times& holds) {
    return d.hold_ts + holds.of(d.state);
}

/// Applies an observed state (status, or heartbeat) at time `ts`.
inline state_effect observe_state(device_slot& d, device_state observed, double ts) {
    if (observed == d.state) return state_effect::none;
    const bool was_pending = hold_pending(d);
    d.state = observed;
    ++d.hold_gen;
    if (!hold_pending(d)) return state_effect::flap;
    d.hold_ts = ts;
    return was_pending ? state_effect::hold_restarted : state_effect::hold_started;
}

/// Ends the pending hold: the observed state becomes the announced one. Returns what to send.
inline notif_type settle(device_slot& d) {
    d.notified = d.state;
    d.notified_ts = d.hold_ts;
    ++d.hold_gen;
    return notif_for(d.state);
}

/// The notification that announced the device's current outage (what its reminders and its
/// Online refer to): PossibleTamper, or the state's own.
inline notif_type announced_as(const device_slot& d) {
    return (d.flags & SLOT_TAMPER) ? notif_type::possible_tamper : notif_for(d.notified);
}

}  // namespace alerts
