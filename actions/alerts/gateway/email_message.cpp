// email_message.cpp — see email_message.hpp.
#include "gateway/email_message.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

#include "core/json_read.hpp"

namespace alerts::gateway {

namespace {

std::uint64_t fnv1a(std::string_view s, std::uint64_t h) {
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

// A header value on one line: control characters (CR, LF, tabs) become spaces, so that no
// field of a notification can add a header.
std::string one_line(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
    return out;
}

std::string base64(std::string_view s) {
    static const char* const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < s.size(); i += 3) {
        const unsigned v = (static_cast<unsigned char>(s[i]) << 16) |
                           (static_cast<unsigned char>(s[i + 1]) << 8) |
                           static_cast<unsigned char>(s[i + 2]);
        out += A[(v >> 18) & 63];
        out += A[(v >> 12) & 63];
        out += A[(v >> 6) & 63];
        out += A[v & 63];
    }
    if (i < s.size()) {
        unsigned v = static_cast<unsigned char>(s[i]) << 16;
        if (i + 1 < s.size()) v |= static_cast<unsigned char>(s[i + 1]) << 8;
        out += A[(v >> 18) & 63];
        out += A[(v >> 12) & 63];
        out += i + 1 < s.size() ? A[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

// A header value as it goes on the wire: ASCII as is, anything else as one RFC 2047 word.
std::string header_value(std::string_view s) {
    std::string flat = one_line(s);
    for (unsigned char c : flat) {
        if (c >= 0x80) return "=?UTF-8?B?" + base64(flat) + "?=";
    }
    return flat;
}

// At most `max` bytes of `s`, cut at a UTF-8 character's start, "…" added when cut: a name
// or an id from the data keeps a subject or a body line short.
std::string clipped(std::string_view s, std::size_t max) {
    if (s.size() <= max) return std::string(s);
    std::size_t end = max;
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    return std::string(s.substr(0, end)) + "…";
}

constexpr std::size_t MAX_LABEL = 100;  // a camera's or a site's name in a subject or a line

// The cameras listed in one e-mail of a site (devicesDown and devicesBack together); the
// notification may list up to 1000 of each.
constexpr long long MAX_LISTED = 200;

std::string camera(const nlohmann::json& notification) {
    const std::string name = json_text(notification, "name");
    if (!name.empty()) return clipped(name, MAX_LABEL);
    const std::string device = json_text(notification, "device");
    return device.empty() ? "unknown camera" : "camera " + clipped(device, MAX_LABEL);
}

// A site's group of cameras (SiteOffline, SiteChanged, SiteOnline): no "device" field.
bool is_site_notification(const std::string& type) {
    return type == "SiteOffline" || type == "SiteChanged" || type == "SiteOnline";
}

// The site as a subject names it: its name, else its id.
std::string site_label(const nlohmann::json& notification) {
    std::string site = json_text(notification, "siteName");
    if (site.empty()) site = json_text(notification, "site");
    return site.empty() ? "(unknown)" : clipped(site, MAX_LABEL);
}

// The site as the body's "Site:" line shows it: "Main lobby (lobby)", or the one it has.
std::string site_line(const nlohmann::json& notification) {
    const std::string id = json_text(notification, "site");
    const std::string name = json_text(notification, "siteName");
    if (name.empty()) return clipped(id, MAX_LABEL);
    if (id.empty()) return clipped(name, MAX_LABEL);
    return clipped(name, MAX_LABEL) + " (" + clipped(id, MAX_LABEL) + ")";
}

// A whole number of the notification ("camerasDown", "cameras"), 0 when absent.
long long count_of(const nlohmann::json& notification, const char* key) {
    const double v = json_number(notification, key);
    return v > 0 && v < 1e12 ? static_cast<long long>(v) : 0;
}

// The site notification's list `key` ("devicesDown", "devicesBack"): its camera entries.
std::vector<const nlohmann::json*> listed(const nlohmann::json& notification, const char* key) {
    std::vector<const nlohmann::json*> out;
    if (const auto found = notification.find(key);
        found != notification.end() && found->is_array()) {
        for (const auto& d : *found) {
            if (d.is_object()) out.push_back(&d);
        }
    }
    return out;
}

std::string cameras_words(long long n) {
    return std::to_string(n) + (n == 1 ? " camera" : " cameras");
}

// "31 of 40 cameras offline" (without the site's size when it is not known).
std::string down_words(const nlohmann::json& notification) {
    const long long down = count_of(notification, "camerasDown");
    const long long all = count_of(notification, "cameras");
    if (all > 0) return std::to_string(down) + " of " + std::to_string(all) + " cameras offline";
    return cameras_words(down) + " offline";
}

// A device state as the core names it ("online", "offline", "internet_offline"), in words.
std::string state_words(const std::string& state) {
    if (state == "internet_offline") return "internet connection lost";
    return state.empty() ? "unknown" : state;
}

std::string what_happened(const nlohmann::json& notification) {
    const std::string type = json_text(notification, "notifType");
    if (type == "SiteOffline") return down_words(notification);
    if (type == "SiteChanged") {
        const std::size_t more = listed(notification, "devicesDown").size();
        const std::size_t back = listed(notification, "devicesBack").size();
        std::string changes;
        if (more > 0) changes = std::to_string(more) + " more down";
        if (back > 0) changes += (changes.empty() ? "" : ", ") + std::to_string(back) + " back";
        return down_words(notification) + (changes.empty() ? "" : " (" + changes + ")");
    }
    if (type == "SiteOnline") return "all cameras back online";
    // A bridge's Offline/InternetOffline names how many cameras went down with it.
    const double affected = json_number(notification, "affected");
    const std::string behind = affected > 0
                                   ? " (" + std::to_string(static_cast<long long>(affected)) +
                                         (affected == 1 ? " camera" : " cameras") + " behind it)"
                                   : "";
    if (type == "Offline") return "offline" + behind;
    if (type == "InternetOffline") return "internet connection lost" + behind;
    if (type == "Online") return "back online";
    if (type == "StillOffline") return "still offline";
    if (type == "PossibleTamper")
        return "possible tampering, offline right after motion (critical)";
    if (type == "FlappingStarted") return "unstable, going offline and online repeatedly";
    if (type == "FlappingStopped")
        return "stable again: " + state_words(json_text(notification, "state"));
    if (type == "Alert") {
        std::string words = "motion";
        const std::string region = json_text(notification, "region");
        if (!region.empty()) words += " in " + region;
        const std::string level = json_text(notification, "level");
        if (!level.empty()) words += " (" + level + ")";
        return words;
    }
    return type.empty() ? "notification" : type;
}

// Who the notification is about: "Site Main lobby" for a site's group, else the camera.
std::string about(const nlohmann::json& notification) {
    if (is_site_notification(json_text(notification, "notifType")))
        return "Site " + site_label(notification);
    return camera(notification);
}

// The cameras of a site's list, one line each ("  cam-0000 (Front door) since ... UTC"), at
// most `max` of them, then how many more.
void list_cameras(std::string& body, const std::vector<const nlohmann::json*>& cameras,
                  long long max) {
    long long shown = 0;
    for (const nlohmann::json* d : cameras) {
        if (shown >= max) break;
        std::string line = clipped(json_text(*d, "device"), MAX_LABEL);
        if (line.empty()) line = "(unknown camera)";
        const std::string name = json_text(*d, "name");
        if (!name.empty()) line += " (" + clipped(name, MAX_LABEL) + ")";
        const double since = json_number(*d, "since");
        if (since > 0) line += " since " + utc_text(since);
        body += "  " + one_line(line) + "\r\n";
        ++shown;
    }
    const long long rest = static_cast<long long>(cameras.size()) - shown;
    if (rest > 0) body += "  … and " + std::to_string(rest) + " more\r\n";
}

// A site's notification in words, its cameras listed, the site and account named.
std::string site_body(const nlohmann::json& notification) {
    const std::string type = json_text(notification, "notifType");
    const std::string opened = utc_text(json_number(notification, "eventTs"));
    const auto down = listed(notification, "devicesDown");
    const auto back = listed(notification, "devicesBack");
    const long long all = count_of(notification, "cameras");
    const long long now_down = count_of(notification, "camerasDown");
    const std::string of_all =
        all > 0 ? std::to_string(now_down) + " of its " + std::to_string(all) + " cameras"
                : cameras_words(now_down);
    std::string body;
    if (type == "SiteOffline") {
        body += "The site's outage began at " + opened + ": " + of_all +
                (now_down == 1 ? " is" : " are") + " offline.\r\n";
        body += "They are reported together in this e-mail, not one by one.\r\n";
        body += "Changes and the site's return follow as replies to it.\r\n";
    } else if (type == "SiteChanged") {
        std::string changed;
        if (!down.empty())
            changed = cameras_words(static_cast<long long>(down.size())) + " went down";
        if (!back.empty()) {
            changed += changed.empty() ? cameras_words(static_cast<long long>(back.size()))
                                       : " and " + std::to_string(back.size());
            changed += " came back";
        }
        const long long update = count_of(notification, "update");
        body += (update > 0 ? "Update " + std::to_string(update) : std::string("An update")) +
                " on the site's outage that began at " + opened + ".\r\n";
        if (!changed.empty()) body += "Since the last e-mail, " + changed + ".\r\n";
        body += "Now " + of_all + (now_down == 1 ? " is" : " are") + " offline.\r\n";
    } else {  // SiteOnline
        double last = 0;
        for (const nlohmann::json* d : back) last = std::max(last, json_number(*d, "since"));
        body += "All of the site's cameras are back online";
        body += last > 0 ? ", the last one since " + utc_text(last) + ".\r\n" : ".\r\n";
        body += "The site's outage had begun at " + opened + ".\r\n";
    }
    // Both lists within MAX_LISTED: each gets half, or more when the other needs less.
    const long long n_down = static_cast<long long>(down.size());
    const long long n_back = static_cast<long long>(back.size());
    const long long down_max = std::min(n_down, std::max(MAX_LISTED / 2, MAX_LISTED - n_back));
    const long long back_max = std::min(n_back, MAX_LISTED - down_max);
    if (!down.empty()) {
        body += "\r\nCameras down (" + std::to_string(n_down) + "):\r\n";
        list_cameras(body, down, down_max);
    }
    if (!back.empty()) {
        body += "\r\nCameras back online (" + std::to_string(n_back) + "):\r\n";
        list_cameras(body, back, back_max);
    }
    body += "\r\n";
    body += "Site:    " + one_line(site_line(notification)) + "\r\n";
    body += "Account: " + one_line(clipped(json_text(notification, "account"), MAX_LABEL)) + "\r\n";
    return body;
}

std::string rfc5322_date(double now) {
    const std::time_t t = static_cast<std::time_t>(now);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S +0000", &tm);
    return buf;
}

}  // namespace

std::string message_id(std::string_view dedup_key) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "<alert.%016llx%016llx@alertgw>",
                  static_cast<unsigned long long>(fnv1a(dedup_key, 14695981039346656037ULL)),
                  static_cast<unsigned long long>(fnv1a(dedup_key, 0x9e3779b97f4a7c15ULL)));
    return buf;
}

std::string utc_text(double seconds) {
    const double whole = std::floor(seconds);
    const std::time_t t = static_cast<std::time_t>(whole);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    std::string out = buf;
    const int ms = static_cast<int>(std::lround((seconds - whole) * 1000));
    if (ms > 0 && ms < 1000) {
        std::snprintf(buf, sizeof buf, ".%03d", ms);
        out += buf;
    }
    return out + " UTC";
}

std::string subject(const nlohmann::json& notification) {
    return about(notification) + ": " + what_happened(notification);
}

std::string email_text(const nlohmann::json& notification, std::string_view dedup_key,
                       std::string_view from, double now) {
    std::string to;
    if (const auto found = notification.find("recipients");
        found != notification.end() && found->is_array()) {
        for (const auto& r : *found) {
            if (!r.is_string()) continue;
            if (!to.empty()) to += ", ";
            to += one_line(r.get<std::string>());
        }
    }
    const std::string type = json_text(notification, "notifType");
    const double event_ts = json_number(notification, "eventTs");
    std::string body;
    body += one_line(subject(notification)) + "\r\n\r\n";
    if (is_site_notification(type)) {
        body += site_body(notification);
    } else if (type == "Offline") {
        body += "The camera stopped reporting at " + utc_text(event_ts) + ".\r\n";
    } else if (type == "InternetOffline") {
        body += "The camera's site lost its internet connection at " + utc_text(event_ts) + ".\r\n";
    } else if (type == "Online") {
        body += "The camera is reporting again since " + utc_text(event_ts) + ".\r\n";
    } else if (type == "Alert") {
        body += "Motion was detected at " + utc_text(event_ts) + ".\r\n";
    } else if (type == "StillOffline") {
        body += "The camera has not reported since " + utc_text(event_ts) + " (reminder " +
                std::to_string(static_cast<long long>(json_number(notification, "reminder"))) +
                ").\r\n";
    } else if (type == "FlappingStarted") {
        body += "The camera keeps going offline and online (since " + utc_text(event_ts) +
                "). No offline or online e-mails are sent for it until it is stable again.\r\n";
    } else if (type == "FlappingStopped") {
        body += "The camera has not changed state since " + utc_text(event_ts) + "; it is " +
                state_words(json_text(notification, "state")) + ".\r\n";
    } else if (type == "PossibleTamper") {
        const double motion_ts = json_number(notification, "motionTs");
        body += "The camera detected motion at " + utc_text(motion_ts) + " and stopped reporting " +
                std::to_string(static_cast<long long>(std::lround(event_ts - motion_ts))) +
                " s later, at " + utc_text(event_ts) +
                ", while its site is armed. Someone may have disabled it: check the site now. "
                "This is sent at once, without the offline hold; an e-mail follows when the "
                "camera reports again.\r\n";
    } else {
        body += "Event time: " + utc_text(event_ts) + ".\r\n";
    }
    if (!is_site_notification(type)) {
        body += "\r\n";
        body += "Camera:  " + one_line(camera(notification)) + "\r\n";
        if (!json_text(notification, "device").empty())
            body += "Device:  " + one_line(json_text(notification, "device")) + "\r\n";
        body += "Account: " + one_line(json_text(notification, "account")) + "\r\n";
        if (!json_text(notification, "site").empty())
            body += "Site:    " + one_line(site_line(notification)) + "\r\n";
    }
    if (!json_text(notification, "region").empty())
        body += "Region:  " + one_line(json_text(notification, "region")) + "\r\n";
    if (!json_text(notification, "level").empty())
        body += "Level:   " + one_line(json_text(notification, "level")) + "\r\n";
    // A bridge's outage: the cameras behind it, which send no Offline of their own.
    if (const auto found = notification.find("affectedDevices");
        found != notification.end() && found->is_array()) {
        body += "\r\nCameras behind it, without e-mails of their own:\r\n";
        for (const auto& d : *found) {
            if (!d.is_object()) continue;
            const std::string device = json_text(d, "device");
            std::string line = json_text(d, "name");
            if (line.empty()) {
                line = device;
            } else {
                line += " (";
                line += device;
                line += ")";
            }
            body += "  ";
            body += one_line(line);
            body += "\r\n";
        }
    }
    body += "Event:   " + utc_text(event_ts) + "\r\n";
    body += "Decided: " + utc_text(json_number(notification, "publishTs")) + "\r\n";
    body += "\r\n-- \r\nalertgw (notification " + one_line(dedup_key) + ")\r\n";

    std::string message;
    message += "From: " + one_line(from) + "\r\n";
    message += "To: " + (to.empty() ? std::string("undisclosed-recipients:;") : to) + "\r\n";
    message += "Subject: " + header_value(subject(notification)) + "\r\n";
    message += "Date: " + rfc5322_date(now) + "\r\n";
    message += "Message-ID: " + message_id(dedup_key) + "\r\n";
    // One outage, one conversation: its reminders and the Online that ends it answer the
    // Offline that opened it (an Online of an action from before threadKey: its `resolves`);
    // a site's changes and its SiteOnline answer its SiteOffline the same way.
    std::string thread = json_text(notification, "threadKey");
    if (thread.empty()) thread = json_text(notification, "resolves");
    if (!thread.empty() && thread != dedup_key) {
        const std::string parent = message_id(thread);
        message += "In-Reply-To: " + parent + "\r\n";
        message += "References: " + parent + "\r\n";
    }
    message += "X-Alert-Dedup-Key: " + one_line(dedup_key) + "\r\n";
    message += "MIME-Version: 1.0\r\n";
    message += "Content-Type: text/plain; charset=utf-8\r\n";
    message += "Content-Transfer-Encoding: 8bit\r\n";
    message += "\r\n";
    // SMTP's end of data is a line holding one dot: libcurl dot-stuffs the body itself.
    message += body;
    return message;
}

}  // namespace alerts::gateway
