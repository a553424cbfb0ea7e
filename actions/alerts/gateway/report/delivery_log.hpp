// delivery_log.hpp — alertgw's log lines (key=value, as the actions print them, through
// core/log_text: control characters escaped). stdout: one line per notification delivered,
// retry and dead-letter lines; stderr: start, stop and Redis errors. Pure text builders.
#pragma once

#include <string>
#include <string_view>

#include "gateway/ledger/delivery_ledger.hpp"

namespace alerts::gateway {

/// The notification's line once every target is final and one has it (alertDelay carried on
/// to `now`, seconds since the epoch), and a second systemAlert line when alertDelay is over
/// `threshold` (empty otherwise).
struct notification_lines {
    std::string delivered;
    std::string over_threshold;
};
notification_lines notification_log(const held_entry& entry, double now, double threshold);

/// A retry, failed-recipient or dead-letter line.
std::string event_log(const ledger_event& event, const held_entry* entry,
                      const std::string& target_name);

/// "key=value key=value" from pairs.
std::string fields_log(std::initializer_list<std::pair<std::string_view, std::string_view>> kv);

std::string fixed3(double value);

}  // namespace alerts::gateway
