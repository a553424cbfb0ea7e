// result_json.cpp — JSON answer and log lines for the notifications of one activation.
#include "result_json.hpp"

#include <cmath>
#include <cstdio>

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

// key=value, quoting values that hold spaces, quotes or '='.
void append_kv(std::string& line, std::string_view key, std::string_view value) {
    if (!line.empty()) line += ' ';
    line.append(key).append("=");
    if (value.find_first_of(" \"=\t") == std::string_view::npos && !value.empty()) {
        line.append(value);
        return;
    }
    line += '"';
    for (char c : value) {
        if (c == '"' || c == '\\') line += '\\';
        line += c;
    }
    line += '"';
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
        {"late", st.late},
        {"flapping", st.flapping},
        {"inhibited", st.inhibited},
        {"silenced", st.silenced},
        {"pending", st.pending},
        {"devices", st.devices},
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

std::string log_line(const alert_core& core, const notification& n) {
    std::string line;
    append_kv(line, "notifType", name_of(n.type));
    append_kv(line, "alertDelay", fixed(to_ms(n.delay), 3));
    append_kv(line, "account", core.account_id(n.account));
    append_kv(line, "device", core.device_id(n.device));
    if (n.region) {
        append_kv(line, "region", n.region->name);
        append_kv(line, "level", n.region->level);
    }
    append_kv(line, "eventTs", fixed(n.event_ts, 3));
    append_kv(line, "publishTs", fixed(n.publish_ts, 3));
    append_kv(line, "recipients", joined(*n.recipients));
    return line;
}

std::string late_line(const alert_core& core, const notification& n) {
    std::string line;
    append_kv(line, "level", "warning");
    append_kv(line, "systemAlert", "alertDelayOverThreshold");
    append_kv(line, "notifType", name_of(n.type));
    append_kv(line, "alertDelay", fixed(to_ms(n.delay), 3));
    append_kv(line, "threshold", fixed(core.config()->alert_delay_threshold, 3));
    append_kv(line, "account", core.account_id(n.account));
    append_kv(line, "device", core.device_id(n.device));
    return line;
}

}  // namespace alerts
