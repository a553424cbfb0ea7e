// result_json.cpp — JSON answer and log lines for the notifications of one activation.
#include "core/result_json.hpp"

#include <cmath>

#include "core/notification_log.hpp"

namespace alerts {

namespace {

using json = nlohmann::json;

// alertDelay in milliseconds: the JSON carries the same value the log line prints.
double to_ms(double seconds) { return std::round(seconds * 1000) / 1000; }

std::string joined(const recipient_list& list) {
    std::string out;
    for (const auto& r : list) {
        if (!out.empty()) out += ',';
        out += r;
    }
    return out;
}

// The fields the action's lines show (core/notification_log writes them); `recipients` holds
// the joined list the fields point into.
notification_log_fields fields_of(const alert_core& core, const notification& n,
                                  const std::string& recipients) {
    notification_log_fields fields;
    fields.type = name_of(n.type);
    fields.alert_delay = to_ms(n.delay);
    fields.account = core.account_id(n.account);
    if (is_site_notif(n.type)) {
        fields.site = core.device_id(n.device).substr(1);  // after the group mark
    } else {
        fields.device = core.device_id(n.device);
    }
    if (n.region) {
        fields.region = n.region->name;
        fields.level = n.region->level;
    }
    if (n.type == notif_type::possible_tamper) fields.level = "critical";
    fields.event_ts = n.event_ts;
    fields.publish_ts = n.publish_ts;
    fields.recipients = recipients;
    return fields;
}

// A site's notification: its site, how many of its cameras are down, and the cameras that went
// down or came back since the group's last notification (docs/alerts.md, "Grouping").
void add_site_fields(const alert_core& core, const notification& n, json& j) {
    const std::string_view site = core.device_id(n.device).substr(1);  // after the group mark
    j["site"] = site;
    if (n.site && !n.site->name.empty()) j["siteName"] = n.site->name;
    j["camerasDown"] = n.down;
    j["cameras"] = n.site ? n.site->devices : 0;
    json down = json::array();
    json back = json::array();
    const std::vector<listed_device>& all = core.result().listed;
    for (std::uint32_t i = 0; i < n.listed && n.listed_at + i < all.size(); ++i) {
        const listed_device& d = all[n.listed_at + i];
        json item = {{"device", d.device}, {"since", d.ts}};
        const device_config* cfg = core.device_cfg_of(n.account, d.device);
        if (cfg && !cfg->name.empty()) item["name"] = cfg->name;
        (d.down ? down : back).push_back(std::move(item));
    }
    j["devicesDown"] = std::move(down);
    j["devicesBack"] = std::move(back);
    if (n.type == notif_type::site_changed) j["update"] = n.reminder;
}

}  // namespace

json notification_json(const alert_core& core, const notification& n) {
    json j = json::object();
    j["notifType"] = name_of(n.type);
    j["account"] = core.account_id(n.account);
    if (is_site_notif(n.type)) {
        add_site_fields(core, n, j);
    } else {
        j["device"] = core.device_id(n.device);
    }
    const device_config* cfg = core.device_cfg(n.device);
    if (cfg && !cfg->name.empty()) j["name"] = cfg->name;
    if (const site_config* site = cfg ? core.config()->site_of(*cfg) : nullptr) {
        j["site"] = site->id;
        if (!site->name.empty()) j["siteName"] = site->name;
    }
    if (n.region) {
        j["region"] = n.region->name;
        j["level"] = n.region->level;
    }
    if (n.type == notif_type::possible_tamper) {
        j["level"] = "critical";
        j["motionTs"] = n.motion_ts;
    }
    j["recipients"] = *n.recipients;
    if (n.receivers) j["receivers"] = *n.receivers;
    if (n.webhooks) j["webhooks"] = *n.webhooks;  // absent: every webhook target
    j["eventTs"] = n.event_ts;
    j["publishTs"] = n.publish_ts;
    j["alertDelay"] = to_ms(n.delay);
    j["dedupKey"] = notif_key_text(n.key);
    if (n.has_resolves) j["resolves"] = notif_key_text(n.resolves);
    if (n.has_thread) j["threadKey"] = notif_key_text(n.thread);
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

std::string log_line(const alert_core& core, const notification& n, bool json) {
    const std::string recipients = joined(*n.recipients);
    return notification_log_line(fields_of(core, n, recipients), json);
}

std::string late_line(const alert_core& core, const notification& n, bool json) {
    return late_log_line(fields_of(core, n, ""), core.config()->alert_delay_threshold, json);
}

}  // namespace alerts
