// result_json.hpp — the activation's answer (docs/alerts.md, "Output") and the log lines (through
// core/notification_log, which alertgw shares) that go with each notification. Pure
// formatting: printing is the caller's business.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/alert_core.hpp"
#include "core/etag_fields.hpp"

namespace alerts {

nlohmann::json notification_json(const alert_core& core, const notification& n);
nlohmann::json stats_json(const batch_stats& st);
/// {"notifications": [...], "rejected": [...], "stats": {...}}
nlohmann::json result_json(const alert_core& core, const batch_result& r,
                           const std::vector<rejection>& rejected);

/// "notifType=Offline alertDelay=0.004 account=... device=... eventTs=... publishTs=...";
/// `json`: the same fields as one JSON object, numbers as numbers
/// ({"notifType":"Offline","alertDelay":0.004,...}).
std::string log_line(const alert_core& core, const notification& n, bool json = false);
/// The system-alert line for a notification later than the threshold (same two forms).
std::string late_line(const alert_core& core, const notification& n, bool json = false);

}  // namespace alerts
