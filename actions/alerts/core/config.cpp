// config.cpp — parsing and validation of the alert configuration.
#include "config.hpp"

#include <cmath>
#include <initializer_list>

namespace alerts {

namespace {

using json = nlohmann::json;

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
    check_keys(j, path, {"name", "recipients", "regions"});
    device_config d;
    d.id = id;
    d.name = get_string(j, "name", "", path);
    d.recipients = get_recipients(j, path);
    if (auto it = j.find("regions"); it != j.end()) {
        require_object(*it, path + ".regions");
        for (const auto& [name, rj] : it->items()) {
            d.regions.push_back(parse_region(name, rj, path + ".regions." + name));
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
            cfg.devices.push_back(parse_device(dev, dj, path + ".devices." + dev));
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
    check_keys(j, "config", {"holds", "alert_delay_threshold", "recent_ids", "accounts"});
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
    cfg.fingerprint = config_fingerprint(j);
    return cfg;
}

}  // namespace alerts
