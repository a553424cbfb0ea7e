// result_json.cpp — JSON answer and log lines for the notifications of one activation.
#include "core/result_json.hpp"

#include <cmath>
#include <cstdio>

#include "core/log_text.hpp"

namespace alerts {

namespace {

using json = nlohmann::json;

// alertDelay in milliseconds: the JSON carries the same value the log line prints.
double to_ms(double seconds) { return std::round(seconds * 1000) / 1000; }

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string joined(const recipient_list& list) {
    std::string out;
    for (const auto& r : list) {
        if (!out.empty()) out += ',';
        out += r;
    }
    return out;
}

}  // namespace

json notification_json(const alert_core& core, const notification& n) {
    json j = json::object();
    j["notifType"] = name_of(n.type);
    j["account"] = core.account_id(n.account);
    j["device"] = core.device_id(n.device);
    const device_config* cfg = core.device_cfg(n.device);
    if (cfg && !cfg->name.empty()) j["name"] = cfg->name;
    if (n.region) {
        j["region"] = n.region->name;
        j["level"] = n.region->level;
    }
    j["recipients"] = *n.recipients;
    j["eventTs"] = n.event_ts;
    j["publishTs"] = n.publish_ts;
    j["alertDelay"] = to_ms(n.delay);
    j["dedupKey"] = notif_key_text(n.key);
    if (n.has_resolves) j["resolves"] = notif_key_text(n.resolves);
    if (n.type == notif_type::flapping_stopped) j["state"] = name_of(n.state);
    if (n.type == notif_type::still_offline) j["reminder"] = n.reminder;
    if (n.has_affected) {
        // The cameras are listed in the core's last result (the one `n` comes from).
        const std::vector<std::uint32_t>& all = core.result().affected;
        json list = json::array();
        for (std::uint32_t i = 0; i < n.affected && n.affected_at + i < all.size(); ++i) {
            const std::uint32_t d = all[n.affected_at + i];
            json item = {{"device", core.device_id(d)}};
            const device_config* member = core.device_cfg(d);
            if (member && !member->name.empty()) item["name"] = member->name;
            list.push_back(std::move(item));
        }
        j["affected"] = n.affected;
        j["affectedDevices"] = std::move(list);
    }
    return j;
}

json stats_json(const batch_stats& st) {
    return json{
        {"etags", st.etags},
        {"heartbeats", st.heartbeats},
        {"ignored", st.ignored},
        {"stale", st.stale},
        {"duplicates", st.duplicates},
        {"foreign", st.foreign},
        {"unknown", st.unknown},
        {"suppressed", st.suppressed},
        {"rejected", st.rejected},
        {"future", st.future},
        {"past", st.past},
        {"late", st.late},
        {"flapping", st.flapping},
        {"inhibited", st.inhibited},
        {"silenced", st.silenced},
        {"pending", st.pending},
        {"devices", st.devices},
        {"damaged", st.damaged},
        {"alertDelay", {{"max", to_ms(st.alert_delay.max)}, {"p50", to_ms(st.alert_delay.p50)}}}};
}

json result_json(const alert_core& core, const batch_result& r,
                 const std::vector<rejection>& rejected) {
    json notes = json::array();
    for (const notification& n : r.notifications) notes.push_back(notification_json(core, n));
    json rej = json::array();
    for (const rejection& x : rejected) rej.push_back({{"index", x.index}, {"error", x.error}});
    return json{{"notifications", std::move(notes)},
                {"rejected", std::move(rej)},
                {"stats", stats_json(r.stats)}};
}

// One log line's fields, as key=value pairs or as one JSON object.
class log_fields {
public:
    explicit log_fields(bool json) : json_(json) {}
    void text(std::string_view key, std::string_view value) {
        if (!json_) {
            append_log_field(line_, key, value);
            return;
        }
        open(key);
        line_ += json(std::string(value)).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    void number(std::string_view key, const std::string& value) {
        if (!json_) {
            append_log_field(line_, key, value);
            return;
        }
        open(key);
        line_ += value;
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

std::string log_line(const alert_core& core, const notification& n, bool json) {
    log_fields line(json);
    line.text("notifType", name_of(n.type));
    line.number("alertDelay", fixed(to_ms(n.delay), 3));
    line.text("account", core.account_id(n.account));
    line.text("device", core.device_id(n.device));
    if (n.region) {
        line.text("region", n.region->name);
        line.text("level", n.region->level);
    }
    line.number("eventTs", fixed(n.event_ts, 3));
    line.number("publishTs", fixed(n.publish_ts, 3));
    line.text("recipients", joined(*n.recipients));
    return line.done();
}

std::string late_line(const alert_core& core, const notification& n, bool json) {
    log_fields line(json);
    line.text("level", "warning");
    line.text("systemAlert", "alertDelayOverThreshold");
    line.text("notifType", name_of(n.type));
    line.number("alertDelay", fixed(to_ms(n.delay), 3));
    line.number("threshold", fixed(core.config()->alert_delay_threshold, 3));
    line.text("account", core.account_id(n.account));
    line.text("device", core.device_id(n.device));
    return line.done();
}

}  // namespace alerts
