// notification_log.hpp — the one writer of a notification's log line and of its late system
// alert, for the actions (core/result_json: when the notification is decided) and alertgw
// (gateway/report/delivery_log: when it is delivered). Two formats: key=value fields through
// core/log_text (control characters escaped), or, in the JSON log mode (OW_LOG_FORMAT=json),
// the same fields in the same order as one JSON object, numbers as numbers (invalid UTF-8
// replaced). Either way a value never breaks its line. Pure formatting.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace alerts {

/// A notification's fields as its log line shows them; the optional ones are printed when set.
struct notification_log_fields {
    std::string_view type;                 // notifType
    double alert_delay = 0;                // seconds from when it was due (3 decimals)
    std::optional<double> delivery_delay;  // alertgw: from the outbox commit to delivery
    std::string_view account;
    std::string_view device;
    std::optional<std::string_view> site;  // a site's notification (no device)
    std::optional<std::string_view> region;
    std::optional<std::string_view> level;
    double event_ts = 0;
    double publish_ts = 0;
    std::string_view recipients;                   // comma-separated
    std::optional<std::string_view> dedup_key;     // alertgw: the outbox entry's
    std::optional<std::string_view> entry;         // alertgw: the outbox entry's id
    std::optional<std::string_view> delivered_to;  // alertgw: the targets that took it
};

/// "notifType=Offline alertDelay=4.000 [deliveryDelay=…] account=… device=… [site=…] [region=…
/// level=…] eventTs=… publishTs=… recipients=… [dedupKey=… entry=… deliveredTo=…]".
std::string notification_log_line(const notification_log_fields& fields, bool json);

/// "level=warning systemAlert=alertDelayOverThreshold notifType=… alertDelay=… threshold=…
/// account=… device=… [site=…] [dedupKey=…]".
std::string late_log_line(const notification_log_fields& fields, double threshold, bool json);

}  // namespace alerts
