// batch_result.hpp — what one activation of the decision core produces: the notifications to
// deliver and the per-activation stats (docs/alerts.md, "Output").
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/dedup_key.hpp"
#include "core/types.hpp"

namespace alerts {

/// One notification. Names are resolved through the core (account_id/device_id); pointers
/// refer into the installed config and stay valid until the config changes.
struct notification {
    // (Ordered by size: pointers and times, keys, counts, then flags, so that it packs.)
    const region_config* region = nullptr;       // motion only
    const recipient_list* recipients = nullptr;  // never null
    double event_ts = 0;    // the ETag's time (for state: when the device changed)
    double publish_ts = 0;  // the evaluation time
    double due_ts = 0;      // eventTs for motion, eventTs + hold for state
    double delay = 0;       // alertDelay = publish_ts - due_ts
    double motion_ts = 0;   // PossibleTamper: the motion before it
    // A site's notification (SiteOffline, SiteChanged, SiteOnline): its site, its cameras down
    // after it (`down`), and the changes it announces, listed[listed_at .. listed_at + listed)
    // of the batch_result. SiteChanged numbers its updates in `reminder` (1 for the first).
    const site_config* site = nullptr;
    // With a routing tree (docs/alerts.md, "Routing"): the receivers it reached, by name, and the
    // webhook targets they name (nullptr: every target, as without routes). `recipients` is then
    // their e-mail addresses.
    const std::vector<std::string>* receivers = nullptr;
    const std::vector<std::string>* webhooks = nullptr;
    notif_key key;       // dedupKey (dedup_key.hpp)
    notif_key resolves;  // Online: the key of the Offline/InternetOffline it ends
    // The outage it belongs to (docs/alerts.md, "Threads"): the key of the Offline or
    // InternetOffline that opened it, for that one, its reminders and the Online that ends it.
    notif_key thread;
    std::uint32_t account = 0;   // account index
    std::uint32_t device = 0;    // device index
    std::uint32_t reminder = 0;  // StillOffline: 1 for the first reminder
    // A bridge's Offline/InternetOffline: the cameras it inhibited, affected[affected_at ..
    // affected_at + affected) of the batch_result.
    std::uint32_t affected_at = 0;
    std::uint32_t affected = 0;
    std::uint32_t down = 0;
    std::uint32_t listed_at = 0;
    std::uint32_t listed = 0;
    notif_type type = notif_type::alert;
    device_state state = device_state::online;  // FlappingStopped: the observed state
    bool late = false;                          // delay over alert_delay_threshold
    bool has_resolves = false;
    bool has_thread = false;
    bool has_affected = false;
};

/// A camera a site's notification names: down (`down`) or back since `ts`.
struct listed_device {
    std::string device;
    double ts = 0;
    bool down = true;
};

/// A notification the rules held back (docs/alerts.md, "Explanations"): which, when, and the
/// rule that decided it — "hold" (back before its hold ended), "flapping", "bridge" (inhibited
/// by its bridge's outage), "silence" (`by`: the silence's id), "maintenance", "reminders" (the
/// schedule's last reminder went out).
struct held_back {
    std::uint32_t device = 0;
    notif_type type = notif_type::offline;
    const char* rule = "";
    double ts = 0;        // the decision's time (the batch's now)
    double event_ts = 0;  // the change or event it is about
    std::string by;       // the silence's id, the bridge's device id
    std::string detail;   // in words
};

struct delay_summary {
    double max = 0;
    double p50 = 0;
};

struct batch_stats {
    std::uint64_t etags = 0;  // received (including rejected)
    std::uint64_t heartbeats = 0;
    std::uint64_t ignored = 0;  // no effect
    std::uint64_t stale = 0;
    std::uint64_t duplicates = 0;
    std::uint64_t foreign = 0;     // another data center's accounts
    std::uint64_t unknown = 0;     // accounts absent from the config
    std::uint64_t suppressed = 0;  // motion inside a region's cooldown
    std::uint64_t rejected = 0;    // malformed ETags, and those below
    std::uint64_t future = 0;      // ts too far after now (ALERT_MAX_FUTURE_SECONDS)
    std::uint64_t past = 0;        // ts too far before now (ALERT_MAX_PAST_SECONDS)
    std::uint64_t late = 0;        // notifications over alert_delay_threshold
    std::uint64_t flapping = 0;    // state changes of flapping devices (no notification)
    std::uint64_t inhibited = 0;   // Offlines of cameras behind a bridge that was announced
    std::uint64_t silenced = 0;    // held back by a maintenance window or a silence
    std::uint64_t pending = 0;     // holds still running, all devices
    std::uint64_t devices = 0;     // devices known to the action
    std::uint64_t damaged = 0;     // Redis keys skipped as not the store's (docs/alerts.md)
    delay_summary alert_delay;
};

struct batch_result {
    std::vector<notification> notifications;
    std::vector<std::uint32_t> affected;         // device indices (see notification::affected)
    std::vector<listed_device> listed;           // see notification::listed
    std::deque<std::vector<std::string>> lists;  // what routed notifications point into
    // Until-resolved silences whose device this batch saw back online: the store ends them.
    std::vector<std::string> resolved_silences;
    std::vector<held_back> held;  // what the rules held back in this batch
    batch_stats stats;
};

}  // namespace alerts
