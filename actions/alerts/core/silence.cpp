// silence.cpp — see silence.hpp.
#include "core/silence.hpp"

#include <cmath>

namespace alerts {

namespace {

using json = nlohmann::json;

const char* const NOTIF_TYPES[] = {"Alert",           "Offline",         "Online",
                                   "InternetOffline", "FlappingStarted", "FlappingStopped",
                                   "StillOffline",    "PossibleTamper"};

std::string text_member(const json& j, const char* key, std::size_t max, const char* where) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    if (!it->is_string()) throw silence_error(std::string(where) + key + " must be a string");
    std::string value = it->get<std::string>();
    if (value.size() > max) {
        throw silence_error(std::string(where) + key + " is over " + std::to_string(max) +
                            " bytes");
    }
    for (unsigned char c : value) {
        if (c < 0x20 || c == 0x7f) {
            throw silence_error(std::string(where) + key + " holds a control character");
        }
    }
    return value;
}

double time_member(const json& j, const char* key, double fallback) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_number())
        throw silence_error(std::string(key) + " must be seconds since the epoch");
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < 0 || v > 1e11) {
        throw silence_error(std::string(key) + " must be seconds since the epoch");
    }
    return v;
}

silence_matchers matchers_of(const json& j) {
    const auto it = j.find("matchers");
    if (it == j.end() || !it->is_object()) {
        throw silence_error("matchers must be an object (account, device, bridge, site, "
                            "region, notifType)");
    }
    for (const auto& [key, value] : it->items()) {
        if (key != "account" && key != "device" && key != "bridge" && key != "site" &&
            key != "region" && key != "notifType") {
            throw silence_error("matchers has an unknown key '" + key +
                                "' (known keys: account, bridge, device, notifType, region, site)");
        }
        (void)value;
    }
    silence_matchers m;
    m.account = text_member(*it, "account", SILENCE_MAX_TEXT, "matchers.");
    m.device = text_member(*it, "device", SILENCE_MAX_TEXT, "matchers.");
    m.bridge = text_member(*it, "bridge", SILENCE_MAX_TEXT, "matchers.");
    m.site = text_member(*it, "site", SILENCE_MAX_TEXT, "matchers.");
    m.region = text_member(*it, "region", SILENCE_MAX_TEXT, "matchers.");
    m.notif_type = text_member(*it, "notifType", SILENCE_MAX_TEXT, "matchers.");
    if (!m.notif_type.empty()) {
        bool known = false;
        for (const char* t : NOTIF_TYPES) known = known || m.notif_type == t;
        if (!known) {
            throw silence_error("matchers.notifType must be one of Alert, Offline, Online, "
                                "InternetOffline, FlappingStarted, FlappingStopped, "
                                "StillOffline, PossibleTamper");
        }
    }
    if (m.empty()) throw silence_error("matchers must have at least one matcher");
    return m;
}

}  // namespace

silence parse_silence_request(const json& request, double now, std::string id) {
    if (!request.is_object()) throw silence_error("the silence must be a JSON object");
    for (const auto& [key, value] : request.items()) {
        if (key != "matchers" && key != "startsAt" && key != "endsAt" && key != "duration" &&
            key != "untilResolved" && key != "comment" && key != "createdBy") {
            throw silence_error("unknown key '" + key +
                                "' (known keys: comment, createdBy, duration, endsAt, "
                                "matchers, startsAt, untilResolved)");
        }
        (void)value;
    }
    silence s;
    s.id = std::move(id);
    s.match = matchers_of(request);
    s.created_at = now;
    s.starts_at = time_member(request, "startsAt", now);
    s.comment = text_member(request, "comment", SILENCE_MAX_COMMENT, "");
    s.created_by = text_member(request, "createdBy", SILENCE_MAX_TEXT, "");
    const auto until = request.find("untilResolved");
    if (until != request.end() && !until->is_boolean()) {
        throw silence_error("untilResolved must be true or false");
    }
    s.until_resolved = until != request.end() && until->get<bool>();
    const bool has_end = request.contains("endsAt"), has_duration = request.contains("duration");
    if (int(has_end) + int(has_duration) + int(s.until_resolved) != 1) {
        throw silence_error("give one of endsAt, duration or untilResolved");
    }
    if (s.until_resolved) {
        if (s.match.account.empty() || s.match.device.empty()) {
            throw silence_error("untilResolved needs matchers.account and matchers.device (it "
                                "ends when that device is back online)");
        }
        return s;
    }
    if (has_duration) {
        const auto& d = request["duration"];
        if (!d.is_number() || !(d.get<double>() > 0)) {
            throw silence_error("duration must be a positive number of seconds");
        }
        s.ends_at = s.starts_at + d.get<double>();
    } else {
        s.ends_at = time_member(request, "endsAt", 0);
    }
    if (!(s.ends_at > s.starts_at)) throw silence_error("endsAt must be after startsAt");
    if (s.ends_at - std::max(s.starts_at, now) > SILENCE_MAX_SECONDS ||
        s.starts_at - now > SILENCE_MAX_SECONDS) {
        throw silence_error("a silence may last at most 366 days, starting within 366 days");
    }
    if (s.ends_at <= now) throw silence_error("endsAt is in the past");
    return s;
}

json silence_json(const silence& s) {
    json m = json::object();
    if (!s.match.account.empty()) m["account"] = s.match.account;
    if (!s.match.device.empty()) m["device"] = s.match.device;
    if (!s.match.bridge.empty()) m["bridge"] = s.match.bridge;
    if (!s.match.site.empty()) m["site"] = s.match.site;
    if (!s.match.region.empty()) m["region"] = s.match.region;
    if (!s.match.notif_type.empty()) m["notifType"] = s.match.notif_type;
    json j = {{"id", s.id},
              {"matchers", std::move(m)},
              {"startsAt", s.starts_at},
              {"createdAt", s.created_at},
              {"createdBy", s.created_by},
              {"comment", s.comment}};
    if (s.until_resolved) {
        j["untilResolved"] = true;
    } else {
        j["endsAt"] = s.ends_at;
    }
    if (s.expired_at > 0) {
        j["endedAt"] = s.expired_at;
        j["endedBy"] = s.ended_by;
    }
    return j;
}

silence silence_from_json(const json& j) {
    try {
        if (!j.is_object()) throw silence_error("not an object");
        silence s;
        s.id = j.at("id").get<std::string>();
        s.match = matchers_of(j);
        s.starts_at = j.at("startsAt").get<double>();
        s.created_at = j.value("createdAt", 0.0);
        s.created_by = j.value("createdBy", "");
        s.comment = j.value("comment", "");
        s.until_resolved = j.value("untilResolved", false);
        if (!s.until_resolved) s.ends_at = j.at("endsAt").get<double>();
        s.expired_at = j.value("endedAt", 0.0);
        s.ended_by = j.value("endedBy", "");
        return s;
    } catch (const silence_error&) {
        throw;
    } catch (const std::exception& error) {
        throw silence_error(std::string("not a silence: ") + error.what());
    }
}

bool silence_matches(const silence& s, const silence_subject& x) {
    const silence_matchers& m = s.match;
    if (!m.account.empty() && m.account != x.account) return false;
    if (!m.device.empty() && m.device != x.device) return false;
    if (!m.bridge.empty() && m.bridge != x.bridge && m.bridge != x.device) return false;
    if (!m.site.empty() && m.site != x.site) return false;
    if (!m.region.empty() && m.region != x.region) return false;
    if (!m.notif_type.empty() && m.notif_type != name_of(x.type)) return false;
    if (s.until_resolved && !x.down) return false;
    return true;
}

}  // namespace alerts
