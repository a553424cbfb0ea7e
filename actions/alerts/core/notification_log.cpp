// notification_log.cpp — see notification_log.hpp.
#include "core/notification_log.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/log_text.hpp"

namespace alerts {

namespace {

std::string fixed3(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.3f", value);
    return buffer;
}

// One log line's fields, as key=value pairs or as one JSON object.
class log_fields {
public:
    explicit log_fields(bool as_json) : json_(as_json) {}
    void text(std::string_view key, std::string_view value) {
        if (!json_) {
            append_log_field(line_, key, value);
            return;
        }
        open(key);
        line_ += nlohmann::json(std::string(value))
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    void maybe_text(std::string_view key, const std::optional<std::string_view>& value) {
        if (value) text(key, *value);
    }
    void number(std::string_view key, double value) {
        if (!json_) {
            append_log_field(line_, key, fixed3(value));
            return;
        }
        open(key);
        line_ += fixed3(value);
    }
    std::string done() {
        if (json_) line_ += line_.empty() ? "{}" : "}";
        return std::move(line_);
    }

private:
    void open(std::string_view key) {
        line_ += line_.empty() ? "{\"" : ",\"";
        line_.append(key).append("\":");
    }
    bool json_;
    std::string line_;
};

}  // namespace

std::string notification_log_line(const notification_log_fields& fields, bool json) {
    log_fields line(json);
    line.text("notifType", fields.type);
    line.number("alertDelay", fields.alert_delay);
    if (fields.delivery_delay) line.number("deliveryDelay", *fields.delivery_delay);
    line.text("account", fields.account);
    line.text("device", fields.device);
    line.maybe_text("site", fields.site);
    line.maybe_text("region", fields.region);
    line.maybe_text("level", fields.level);
    line.number("eventTs", fields.event_ts);
    line.number("publishTs", fields.publish_ts);
    line.text("recipients", fields.recipients);
    line.maybe_text("dedupKey", fields.dedup_key);
    line.maybe_text("entry", fields.entry);
    line.maybe_text("deliveredTo", fields.delivered_to);
    return line.done();
}

std::string late_log_line(const notification_log_fields& fields, double threshold, bool json) {
    log_fields line(json);
    line.text("level", "warning");
    line.text("systemAlert", "alertDelayOverThreshold");
    line.text("notifType", fields.type);
    line.number("alertDelay", fields.alert_delay);
    line.number("threshold", threshold);
    line.text("account", fields.account);
    line.text("device", fields.device);
    line.maybe_text("site", fields.site);
    line.maybe_text("dedupKey", fields.dedup_key);
    return line.done();
}

}  // namespace alerts
