// delivery_log.hpp — alertgw's log lines (key=value, as the actions print them, through
// core/log_text and core/notification_log: control characters escaped). stdout: one line per
// notification delivered, retry and dead-letter lines; stderr: start, stop and Redis errors.
// Pure text builders.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "gateway/ledger/delivery_ledger.hpp"

namespace alerts::gateway {

/// The notification's line once every target is final and one has it (alertDelay carried on
/// to `now`, seconds since the epoch), and a second systemAlert line when alertDelay is over
/// `threshold` (empty otherwise): core/notification_log's lines, the actions' fields with the
/// delivery's; `as_json`: as JSON objects, as the actions print them with OW_LOG_FORMAT=json.
struct notification_lines {
    std::string delivered;
    std::string over_threshold;
    double alert_delay = 0;     // seconds: from due to delivered
    double delivery_delay = 0;  // seconds: from the commit to delivered
};
notification_lines notification_log(const held_entry& entry, double now, double threshold,
                                    bool as_json = false);

/// A retry, failed-recipient or dead-letter line.
std::string event_log(const ledger_event& event, const held_entry* entry,
                      const std::string& target_name);

/// "key=value key=value" from pairs.
std::string fields_log(std::initializer_list<std::pair<std::string_view, std::string_view>> kv);

}  // namespace alerts::gateway
