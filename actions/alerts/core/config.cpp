// config.cpp — parsing and validation of the alert configuration.
#include "core/config.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "core/records.hpp"

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
    for (unsigned char c : name) {
        if (c < 0x20 || c == 0x7f) fail(path, "has a control character in its name");
    }
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

// "labels": {name: value}, what routes match on: at most MAX_DEVICE_LABELS, names and values of
// 1 to 255 bytes without control characters.
label_map get_labels(const json& j, const std::string& path) {
    label_map out;
    auto it = j.find("labels");
    if (it == j.end()) return out;
    const std::string at = path + ".labels";
    require_object(*it, at);
    if (it->size() > MAX_DEVICE_LABELS) {
        fail(at, "has more than " + std::to_string(MAX_DEVICE_LABELS) + " labels");
    }
    const auto bad = [](std::string_view s) {
        return s.empty() || s.size() > 255 || std::any_of(s.begin(), s.end(), [](char c) {
                   const auto u = static_cast<unsigned char>(c);
                   return u < 0x20 || u == 0x7f;
               });
    };
    for (const auto& [name, value] : it->items()) {
        if (bad(name))
            fail(at, "has a label name that is empty, too long or has control characters");
        if (!value.is_string() || bad(value.get_ref<const std::string&>())) {
            fail(member_path(at, ".", name),
                 "must be a string of 1 to 255 characters without control characters");
        }
        out.emplace_back(name, value.get<std::string>());
    }
    std::sort(out.begin(), out.end());  // (a JSON object's names are sorted already)
    return out;
}

device_config parse_device(const std::string& id, const json& j, const std::string& path) {
    require_object(j, path);
    check_keys(j, path, {"name", "recipients", "regions", "bridge", "site", "labels"});
    device_config d;
    d.id = id;
    d.name = get_string(j, "name", "", path);
    d.bridge = get_string(j, "bridge", "", path);
    d.site_id = get_string(j, "site", "", path);
    if (j.contains("site") && d.site_id.empty()) fail(path + ".site", "must not be empty");
    if (j.contains("bridge") && (d.bridge.empty() || d.bridge == id)) {
        fail(path + ".bridge", "must name another device of the account");
    }
    d.recipients = get_recipients(j, path);
    d.labels = get_labels(j, path);
    if (auto it = j.find("regions"); it != j.end()) {
        require_object(*it, path + ".regions");
        for (const auto& [name, rj] : it->items()) {
            d.regions.push_back(parse_region(name, rj, member_path(path, ".regions.", name)));
        }
    }
    return d;
}

// "armed": true, false, or an array of the names of time_intervals.
void parse_armed(const alert_config& cfg, site_config& site, const json& j,
                 const std::string& path) {
    auto it = j.find("armed");
    if (it == j.end()) return;
    if (it->is_boolean()) {
        site.always_armed = it->get<bool>();
        return;
    }
    if (!it->is_array() || it->empty() || it->size() > MAX_TIME_INTERVALS) {
        fail(path + ".armed", "must be true, false or an array of names of time_intervals");
    }
    site.always_armed = false;
    for (const json& name : *it) {
        auto known = std::find_if(cfg.intervals.begin(), cfg.intervals.end(),
                                  [&](const time_interval& ti) { return name == ti.name; });
        if (known == cfg.intervals.end()) {
            fail(path + ".armed", "names " + name.dump() + ", which is not in time_intervals");
        }
        site.armed.push_back(static_cast<std::uint32_t>(known - cfg.intervals.begin()));
    }
}

void parse_sites(alert_config& cfg, account_config& a, const json& j, const std::string& path) {
    auto it = j.find("sites");
    if (it == j.end()) return;
    require_object(*it, path + ".sites");
    for (const auto& [id, sj] : it->items()) {
        const std::string at = member_path(path, ".sites.", id);
        if (id.empty() || id.size() > MAX_SITE_ID) fail(at, "has an invalid id");
        for (unsigned char c : id) {
            if (c < 0x20 || c == 0x7f) fail(at, "has a control character in its id");
        }
        require_object(sj, at);
        check_keys(sj, at, {"name", "armed"});
        if (cfg.sites.size() >= MAX_SITES) {
            fail(at, "is one site too many (at most " + std::to_string(MAX_SITES) + ")");
        }
        site_config site;
        site.id = id;
        site.name = get_string(sj, "name", "", at);
        site.group_id = group_device_id(id);
        parse_armed(cfg, site, sj, at);
        a.sites.emplace(id, static_cast<std::uint32_t>(cfg.sites.size()));
        cfg.sites.push_back(std::move(site));
    }
}

// Each device's site: its own, else its bridge's (a bridge's cameras are where it is).
void resolve_sites(alert_config& cfg, const account_config& a, const std::string& path) {
    for (const auto& [dev, index] : a.devices) {
        device_config& d = cfg.devices[index];
        if (d.site_id.empty()) continue;
        auto s = a.sites.find(d.site_id);
        if (s == a.sites.end()) {
            fail(member_path(path, ".devices.", dev, ".site"),
                 "names '" + d.site_id + "', which is not a site of the account");
        }
        d.site = static_cast<std::int32_t>(s->second);
    }
    for (const auto& [dev, index] : a.devices) {
        device_config& d = cfg.devices[index];
        if (d.site < 0 && d.bridge_cfg >= 0)
            d.site = cfg.devices[static_cast<std::size_t>(d.bridge_cfg)].site;
        if (d.site >= 0) ++cfg.sites[static_cast<std::size_t>(d.site)].devices;
    }
}

// "grouping": false, true (the defaults) or {group_wait, group_interval}; `base` is what the
// account inherits (the config's top-level grouping).
group_config parse_grouping(const json& j, const group_config& base, const std::string& path) {
    auto it = j.find("grouping");
    if (it == j.end()) return base;
    group_config g = base;
    if (it->is_boolean()) {
        g.enabled = it->get<bool>();
        return g;
    }
    const std::string at = path.empty() ? "grouping" : path + ".grouping";
    if (!it->is_object()) fail(at, "must be false, true or an object");
    check_keys(*it, at, {"enabled", "group_wait", "group_interval"});
    g.enabled = true;
    if (auto e = it->find("enabled"); e != it->end()) {
        if (!e->is_boolean()) fail(at + ".enabled", "must be a boolean");
        g.enabled = e->get<bool>();
    }
    g.wait = get_seconds(*it, "group_wait", g.wait, at);
    g.interval = get_seconds(*it, "group_interval", g.interval, at);
    if (g.wait > 86400) fail(at + ".group_wait", "must be at most 86400 seconds");
    if (g.interval < 1 || g.interval > 86400) {
        fail(at + ".group_interval", "must be from 1 to 86400 seconds");
    }
    return g;
}

void parse_account(alert_config& cfg, const std::string& id, const json& j) {
    const std::string path = "accounts." + id;
    require_object(j, path);
    check_keys(j, path, {"datacenter", "recipients", "devices", "sites", "grouping"});
    account_config a;
    a.id = id;
    a.grouping = parse_grouping(j, cfg.grouping, path);
    a.datacenter = get_string(j, "datacenter", "", path);
    a.recipients = get_recipients(j, path);
    parse_sites(cfg, a, j, path);
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
    resolve_sites(cfg, a, path);
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

void parse_intervals(alert_config& cfg, const json& j) {
    auto it = j.find("time_intervals");
    if (it == j.end()) return;
    require_object(*it, "time_intervals");
    if (it->size() > MAX_TIME_INTERVALS) {
        fail("time_intervals", "has more than " + std::to_string(MAX_TIME_INTERVALS) + " names");
    }
    for (const auto& [name, tj] : it->items()) {
        if (name.empty() || name.size() > 255)
            fail("time_intervals." + name, "has an invalid name");
        try {
            cfg.intervals.push_back(parse_time_interval(name, tj));
        } catch (const time_interval_error& e) {
            throw config_error(std::string("config: ") + e.what());
        }
    }
}

void parse_tamper(tamper_config& t, const json& j) {
    auto it = j.find("tamper");
    if (it == j.end()) return;
    if (it->is_boolean()) {
        t.enabled = it->get<bool>();
        return;
    }
    if (!it->is_object()) fail("config.tamper", "must be false, true or an object");
    check_keys(*it, "tamper", {"enabled", "window"});
    if (auto e = it->find("enabled"); e != it->end()) {
        if (!e->is_boolean()) fail("tamper.enabled", "must be a boolean");
        t.enabled = e->get<bool>();
    }
    t.window = get_seconds(*it, "window", t.window, "tamper");
    if (t.window > 86400) fail("tamper.window", "must be at most 86400 seconds");
}

void parse_routes(alert_config& cfg, const json& j) {
    const auto route = j.find("route");
    const auto receivers = j.find("receivers");
    try {
        cfg.routes = route_tree::parse(route == j.end() ? nullptr : &*route,
                                       receivers == j.end() ? nullptr : &*receivers, cfg.intervals);
    } catch (const route_error& e) {
        throw config_error(std::string("config: ") + e.what());
    }
}

}  // namespace

bool alert_config::armed(const site_config& s, double t) const {
    if (s.always_armed) return true;
    return std::any_of(s.armed.begin(), s.armed.end(),
                       [&](std::uint32_t i) { return intervals[i].contains(t); });
}

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
    check_keys(
        j, "config",
        {"holds", "alert_delay_threshold", "recent_ids", "accounts", "flapping", "bridge_grace",
         "maintenance", "reminders", "time_intervals", "tamper", "grouping", "receivers", "route"});
    alert_config cfg;
    parse_intervals(cfg, j);  // before the accounts: their sites name intervals
    cfg.grouping = parse_grouping(j, cfg.grouping, "");  // before the accounts: their default
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
    parse_tamper(cfg.tamper, j);
    parse_routes(cfg, j);
    cfg.fingerprint = config_fingerprint(j);
    return cfg;
}

}  // namespace alerts
