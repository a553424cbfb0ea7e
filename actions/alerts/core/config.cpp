// config.cpp — parsing and validation of the alert configuration.
#include "core/config.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace alerts {

namespace {

using json = nlohmann::json;

// "<path><part><name>": a member's path in error texts (built with append, no temporaries).
std::string member_path(const std::string& path, std::string_view part, std::string_view name = {},
                        std::string_view tail = {}) {
    std::string out = path;
    out.append(part).append(name).append(tail);
    return out;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw config_error("config: " + path + " " + what);
}

double get_seconds(const json& obj, const char* key, double fallback, const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end()) return fallback;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
        fail(path + "." + key, "must be a non-negative number");
    }
    return it->get<double>();
}

std::string get_string(const json& obj, const char* key, std::string fallback,
                       const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end()) return fallback;
    if (!it->is_string()) fail(path + "." + key, "must be a string");
    return it->get<std::string>();
}

recipient_list get_recipients(const json& obj, const std::string& path) {
    recipient_list out;
    auto it = obj.find("recipients");
    if (it == obj.end()) return out;
    if (!it->is_array()) fail(path + ".recipients", "must be an array of strings");
    for (const auto& r : *it) {
        if (!r.is_string()) fail(path + ".recipients", "must be an array of strings");
        out.push_back(r.get<std::string>());
    }
    return out;
}

const json& require_object(const json& j, const std::string& path) {
    if (!j.is_object()) fail(path, "must be an object");
    return j;
}

// A misspelt key would otherwise be ignored silently (docs/alerts.md, "Config reference").
void check_keys(const json& j, const std::string& path, std::initializer_list<const char*> known) {
    for (const auto& item : j.items()) {
        bool found = false;
        for (const char* k : known) found = found || item.key() == k;
        if (found) continue;
        std::string list;
        for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        fail(path, "has an unknown key '" + item.key() + "' (known keys: " + list + ")");
    }
}

region_config parse_region(const std::string& name, const json& j, const std::string& path) {
    require_object(j, path);
    check_keys(j, path, {"enabled", "sensitivity", "level", "recipients", "cooldown"});
    region_config r;
    r.name = name;
    if (auto it = j.find("enabled"); it != j.end()) {
        if (!it->is_boolean()) fail(path + ".enabled", "must be a boolean");
        r.enabled = it->get<bool>();
    }
    r.sensitivity = get_seconds(j, "sensitivity", 0, path);
    r.level = get_string(j, "level", "normal", path);
    r.recipients = get_recipients(j, path);
    r.cooldown = get_seconds(j, "cooldown", 0, path);
    return r;
}

device_config parse_device(const std::string& id, const json& j, const std::string& path) {
    require_object(j, path);
    check_keys(j, path, {"name", "recipients", "regions", "bridge"});
    device_config d;
    d.id = id;
    d.name = get_string(j, "name", "", path);
    d.bridge = get_string(j, "bridge", "", path);
    if (j.contains("bridge") && (d.bridge.empty() || d.bridge == id)) {
        fail(path + ".bridge", "must name another device of the account");
    }
    d.recipients = get_recipients(j, path);
    if (auto it = j.find("regions"); it != j.end()) {
        require_object(*it, path + ".regions");
        for (const auto& [name, rj] : it->items()) {
            d.regions.push_back(parse_region(name, rj, member_path(path, ".regions.", name)));
        }
    }
    return d;
}

void parse_account(alert_config& cfg, const std::string& id, const json& j) {
    const std::string path = "accounts." + id;
    require_object(j, path);
    check_keys(j, path, {"datacenter", "recipients", "devices"});
    account_config a;
    a.id = id;
    a.datacenter = get_string(j, "datacenter", "", path);
    a.recipients = get_recipients(j, path);
    if (auto it = j.find("devices"); it != j.end()) {
        require_object(*it, path + ".devices");
        for (const auto& [dev, dj] : it->items()) {
            a.devices.emplace(dev, static_cast<std::uint32_t>(cfg.devices.size()));
            cfg.devices.push_back(parse_device(dev, dj, member_path(path, ".devices.", dev)));
        }
    }
    // Bridges: the same account's devices; each bridge lists the devices behind it.
    for (const auto& [dev, index] : a.devices) {
        device_config& d = cfg.devices[index];
        if (d.bridge.empty()) continue;
        auto b = a.devices.find(d.bridge);
        if (b == a.devices.end()) {
            fail(member_path(path, ".devices.", dev, ".bridge"),
                 "names '" + d.bridge + "', which is not a device of the account");
        }
        d.bridge_cfg = static_cast<std::int32_t>(b->second);
    }
    for (const auto& [dev, index] : a.devices) {
        const std::int32_t b = cfg.devices[index].bridge_cfg;
        if (b >= 0) cfg.devices[static_cast<std::size_t>(b)].members.push_back(index);
    }
    for (const auto& [dev, index] : a.devices) {
        device_config& d = cfg.devices[index];
        std::sort(d.members.begin(), d.members.end());
        if (!d.members.empty() && d.bridge_cfg >= 0) {
            fail(member_path(path, ".devices.", dev, ".bridge"),
                 "is set on a bridge (devices name it as theirs): a bridge has no bridge");
        }
    }
    cfg.accounts.push_back(std::move(a));
}

void parse_holds(hold_times& holds, const json& j) {
    auto it = j.find("holds");
    if (it == j.end()) return;
    require_object(*it, "holds");
    check_keys(*it, "holds", {"offline", "online", "internet_offline"});
    holds.offline = get_seconds(*it, "offline", holds.offline, "holds");
    holds.online = get_seconds(*it, "online", holds.online, "holds");
    holds.internet_offline = get_seconds(*it, "internet_offline", holds.internet_offline, "holds");
}

void parse_flapping(flapping_config& f, const json& j) {
    auto it = j.find("flapping");
    if (it == j.end()) return;
    if (it->is_boolean()) {
        f.enabled = it->get<bool>();
        return;
    }
    if (!it->is_object()) fail("config.flapping", "must be false, true or an object");
    check_keys(*it, "flapping", {"changes", "window", "quiet"});
    const double changes = get_seconds(*it, "changes", f.changes, "flapping");
    if (changes < 2 || changes > MAX_FLAP_CHANGES || changes != std::floor(changes)) {
        fail("flapping.changes",
             "must be a whole number from 2 to " + std::to_string(MAX_FLAP_CHANGES));
    }
    f.changes = static_cast<std::uint32_t>(changes);
    f.window = get_seconds(*it, "window", f.window, "flapping");
    f.quiet = get_seconds(*it, "quiet", f.quiet, "flapping");
    if (f.quiet <= 0) fail("flapping.quiet", "must be more than 0");
}

void parse_reminders(std::vector<double>& out, const json& j) {
    auto it = j.find("reminders");
    if (it == j.end()) return;
    require_object(*it, "reminders");
    check_keys(*it, "reminders", {"offline"});
    auto list = it->find("offline");
    if (list == it->end()) return;
    if (!list->is_array() || list->size() > MAX_REMINDERS) {
        fail("reminders.offline",
             "must be an array of at most " + std::to_string(MAX_REMINDERS) + " positive numbers");
    }
    for (const auto& v : *list) {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) {
            fail("reminders.offline", "must be an array of positive numbers (seconds)");
        }
        out.push_back(v.get<double>());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
}

void parse_maintenance(alert_config& cfg, const json& j) {
    auto it = j.find("maintenance");
    if (it == j.end()) return;
    if (!it->is_array()) fail("config.maintenance", "must be an array of windows");
    for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string path = "maintenance[" + std::to_string(i) + "]";
        const json& w = require_object((*it)[i], path);
        check_keys(w, path, {"account", "device", "from", "until", "comment"});
        const std::string account = get_string(w, "account", "", path);
        auto acct = std::find_if(cfg.accounts.begin(), cfg.accounts.end(),
                                 [&](const account_config& a) { return a.id == account; });
        if (acct == cfg.accounts.end()) {
            fail(path + ".account", "must name an account of the config");
        }
        maintenance_window mw;
        mw.device = get_string(w, "device", "", path);
        if (w.contains("device") && mw.device.empty()) fail(path + ".device", "must not be empty");
        if (!w.contains("from") || !w.contains("until")) fail(path, "needs 'from' and 'until'");
        mw.from = get_seconds(w, "from", 0, path);
        mw.until = get_seconds(w, "until", 0, path);
        if (mw.until <= mw.from) fail(path + ".until", "must be after 'from'");
        get_string(w, "comment", "", path);
        acct->maintenance.push_back(std::move(mw));
        cfg.has_maintenance = true;
    }
}

}  // namespace

const region_config* device_config::find_region(std::string_view region) const {
    for (const auto& r : regions) {
        if (r.name == region) return &r;
    }
    return nullptr;
}

std::uint64_t config_fingerprint(const nlohmann::json& j) {
    return static_cast<std::uint64_t>(std::hash<nlohmann::json>{}(j));
}

alert_config parse_config(const nlohmann::json& j) {
    if (!j.is_object()) throw config_error("config: must be an object");
    check_keys(j, "config",
               {"holds", "alert_delay_threshold", "recent_ids", "accounts", "flapping",
                "bridge_grace", "maintenance", "reminders"});
    alert_config cfg;
    parse_holds(cfg.holds, j);
    cfg.alert_delay_threshold = get_seconds(j, "alert_delay_threshold", 300, "config");
    // Checked before the cast (above 2^64 it is undefined) and before reset() allocates it.
    const double ids = get_seconds(j, "recent_ids", 65536, "config");
    if (ids > static_cast<double>(MAX_RECENT_IDS) || ids != std::floor(ids)) {
        fail("config.recent_ids",
             "must be a whole number from 0 to " + std::to_string(MAX_RECENT_IDS));
    }
    cfg.recent_ids = static_cast<std::size_t>(ids);
    auto it = j.find("accounts");
    if (it == j.end()) throw config_error("config: missing 'accounts'");
    require_object(*it, "accounts");
    for (const auto& [id, aj] : it->items()) {
        if (id.empty() || id.size() > 255) fail("accounts." + id, "has an invalid id");
        parse_account(cfg, id, aj);
    }
    parse_flapping(cfg.flapping, j);
    cfg.bridge_grace = get_seconds(j, "bridge_grace", cfg.bridge_grace, "config");
    parse_reminders(cfg.reminders, j);
    parse_maintenance(cfg, j);
    cfg.fingerprint = config_fingerprint(j);
    return cfg;
}

}  // namespace alerts
