// delivery_log.cpp — see delivery_log.hpp.
#include "gateway/report/delivery_log.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/log_text.hpp"

namespace alerts::gateway {

namespace {

using json = nlohmann::json;

double number_or(const json& notification, const char* key, double fallback) {
    const auto found = notification.find(key);
    return found != notification.end() && found->is_number() ? found->get<double>() : fallback;
}

std::string text_or_empty(const json& notification, const char* key) {
    const auto found = notification.find(key);
    return found != notification.end() && found->is_string() ? found->get<std::string>() : "";
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
    return out;
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

std::string fixed3(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.3f", value);
    return buffer;
}

std::string fields_log(std::initializer_list<std::pair<std::string_view, std::string_view>> kv) {
    std::string line;
    for (const auto& [key, value] : kv) alerts::append_log_field(line, key, value);
    return line;
}

// alertDelay as the actions define it (from when the notification was due: eventTs for
// motion, eventTs + hold for a state), carried on to this moment: the action's value
// (publishTs − due) plus the time since publishTs.
notification_lines notification_log(const held_entry& entry, double now, double threshold) {
    json notification = json::parse(entry.notification, nullptr, false);
    if (!notification.is_object()) notification = json::object();
    const double event_ts = number_or(notification, "eventTs", 0.0);
    const double publish_ts = number_or(notification, "publishTs", event_ts);
    const double alert_delay =
        number_or(notification, "alertDelay", publish_ts - event_ts) + now - publish_ts;
    const std::string type = text_or_empty(notification, "notifType");
    const std::string account = text_or_empty(notification, "account");
    const std::string device = text_or_empty(notification, "device");
    const double delivery_delay = now - static_cast<double>(entry.commit_ms) / 1000.0;
    std::string line = fields_log({{"notifType", type},
                                   {"alertDelay", fixed3(alert_delay)},
                                   {"deliveryDelay", fixed3(delivery_delay)},
                                   {"account", account},
                                   {"device", device}});
    for (const char* optional : {"region", "level"}) {
        if (notification.contains(optional) && notification[optional].is_string()) {
            alerts::append_log_field(line, optional, notification[optional].get<std::string>());
        }
    }
    line += " " + fields_log({{"eventTs", fixed3(event_ts)},
                              {"publishTs", fixed3(publish_ts)},
                              {"recipients", joined(recipients_of(notification))},
                              {"dedupKey", entry.dedup_key},
                              {"entry", entry.id},
                              {"deliveredTo", joined(entry.delivered_to)}});
    notification_lines lines{line, ""};
    if (alert_delay > threshold) {
        lines.over_threshold = fields_log({{"level", "warning"},
                                           {"systemAlert", "alertDelayOverThreshold"},
                                           {"notifType", type},
                                           {"alertDelay", fixed3(alert_delay)},
                                           {"threshold", fixed3(threshold)},
                                           {"account", account},
                                           {"device", device},
                                           {"dedupKey", entry.dedup_key}});
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
