// dedup_key.hpp — a notification's identity (docs/alerts.md, "Notification identity"): the
// `dedupKey` every notification carries, and the `resolves` of an `Online` (the key of the
// `Offline`/`InternetOffline` it ends).
//
// A key is derived from what the notification announces, never from when it was decided: the
// account, the device, the notification type and the time of the change (`eventTs`), and for a
// motion alert the region and the event's id. So every container, every store (memory, state
// dir, Redis) and every re-send of a batch gives the same notification the same key. Text:
//   <notifType>-<eventTs in whole milliseconds>-<32 hex digits>
// e.g. "Offline-1764460801000-3b5e0c2a9d7f41e86c0b2a4f19d3e7a2": the first two parts for a
// person reading a log, the digits a 128-bit hash of every part (the exact eventTs included),
// so the text holds only [A-Za-z0-9-] whatever the account and device ids hold (it goes into
// e-mail headers and Message-IDs as it is).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/types.hpp"

namespace alerts {

struct notif_key {
    notif_type type = notif_type::alert;
    double ts = 0;  // eventTs of the notification the key names
    std::uint64_t hi = 0, lo = 0;
};

/// The key of a notification of `type` for (account, device) whose change happened at `ts`;
/// `region` and `event` (the ETag's id, empty without one) for a motion alert only.
notif_key make_notif_key(std::string_view account, std::string_view device, notif_type type,
                         double ts, std::string_view region = {}, std::string_view event = {});

/// The key's text, appended to `out`.
void append_notif_key(std::string& out, const notif_key& key);
std::string notif_key_text(const notif_key& key);

}  // namespace alerts
