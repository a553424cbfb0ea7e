// delivery_log.cpp — see delivery_log.hpp.
#include "gateway/report/delivery_log.hpp"

#include <nlohmann/json.hpp>
#include <optional>

#include "core/log_text.hpp"
#include "core/notification_log.hpp"

namespace alerts::gateway {

namespace {

using json = nlohmann::json;

double number_or(const json& notification, const char* key, double fallback) {
    const auto found = notification.find(key);
    return found != notification.end() && found->is_number() ? found->get<double>() : fallback;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
    return out;
}

// The string member `key`, if the notification has one (a view into it).
std::optional<std::string_view> optional_text(const json& notification, const char* key) {
    const auto found = notification.find(key);
    if (found == notification.end() || !found->is_string()) return std::nullopt;
    return std::string_view(found->get_ref<const std::string&>());
}

std::vector<std::string> recipients_of(const json& notification) {
    std::vector<std::string> out;
    const auto list = notification.find("recipients");
    if (list == notification.end() || !list->is_array()) return out;
    for (const auto& address : *list) {
        if (address.is_string()) out.push_back(address.get<std::string>());
    }
    return out;
}

}  // namespace

std::string fields_log(std::initializer_list<std::pair<std::string_view, std::string_view>> kv) {
    std::string line;
    for (const auto& [key, value] : kv) alerts::append_log_field(line, key, value);
    return line;
}

// alertDelay as the actions define it (from when the notification was due: eventTs for
// motion, eventTs + hold for a state), carried on to this moment: the action's value
// (publishTs − due) plus the time since publishTs. The line is the actions' one
// (core/notification_log) with the delivery's fields.
notification_lines notification_log(const held_entry& entry, double now, double threshold,
                                    bool as_json) {
    json notification = json::parse(entry.notification, nullptr, false);
    if (!notification.is_object()) notification = json::object();
    const std::string recipients = joined(recipients_of(notification));
    const std::string delivered_to = joined(entry.delivered_to);
    notification_log_fields fields;
    fields.type = optional_text(notification, "notifType").value_or("");
    fields.event_ts = number_or(notification, "eventTs", 0.0);
    fields.publish_ts = number_or(notification, "publishTs", fields.event_ts);
    fields.alert_delay =
        number_or(notification, "alertDelay", fields.publish_ts - fields.event_ts) + now -
        fields.publish_ts;
    fields.delivery_delay = now - static_cast<double>(entry.commit_ms) / 1000.0;
    fields.account = optional_text(notification, "account").value_or("");
    fields.device = optional_text(notification, "device").value_or("");
    if (!notification.contains("device")) fields.site = optional_text(notification, "site");
    fields.region = optional_text(notification, "region");
    fields.level = optional_text(notification, "level");
    fields.recipients = recipients;
    fields.dedup_key = entry.dedup_key;
    fields.entry = entry.id;
    fields.delivered_to = delivered_to;
    notification_lines lines{notification_log_line(fields, as_json), "", fields.alert_delay,
                             fields.delivery_delay.value_or(0)};
    if (fields.alert_delay > threshold) {
        lines.over_threshold = late_log_line(fields, threshold, as_json);
    }
    return lines;
}

std::string event_log(const ledger_event& event, const held_entry* entry,
                      const std::string& target_name) {
    const bool dead = event.what == ledger_event::kind::dead_letter;
    std::string line = fields_log({{"level", dead ? "error" : "warning"},
                                   {"event", dead ? "deadLetter" : "retry"},
                                   {"target", target_name},
                                   {"entry", event.entry_id},
                                   {"dedupKey", entry ? entry->dedup_key : ""}});
    if (!event.recipient.empty()) alerts::append_log_field(line, "recipient", event.recipient);
    alerts::append_log_field(line, dead ? "attempts" : "attempt", std::to_string(event.attempts));
    alerts::append_log_field(line, "error", event.error);
    return line;
}

}  // namespace alerts::gateway
