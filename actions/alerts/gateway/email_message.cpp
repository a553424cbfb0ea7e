// email_message.cpp — see email_message.hpp.
#include "gateway/email_message.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>

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

std::string camera(const nlohmann::json& notification) {
    const std::string name = json_text(notification, "name");
    const std::string device = json_text(notification, "device");
    return name.empty() ? "camera " + device : name;
}

// A device state as the core names it ("online", "offline", "internet_offline"), in words.
std::string state_words(const std::string& state) {
    if (state == "internet_offline") return "internet connection lost";
    return state.empty() ? "unknown" : state;
}

std::string what_happened(const nlohmann::json& notification) {
    const std::string type = json_text(notification, "notifType");
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
    return camera(notification) + ": " + what_happened(notification);
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
    body += camera(notification) + ": " + what_happened(notification) + "\r\n\r\n";
    if (type == "Offline") {
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
    body += "\r\n";
    body += "Camera:  " + one_line(camera(notification)) + "\r\n";
    body += "Device:  " + one_line(json_text(notification, "device")) + "\r\n";
    body += "Account: " + one_line(json_text(notification, "account")) + "\r\n";
    if (!json_text(notification, "site").empty()) {
        std::string site = json_text(notification, "siteName");
        site = site.empty() ? json_text(notification, "site")
                            : site + " (" + json_text(notification, "site") + ")";
        body += "Site:    " + one_line(site) + "\r\n";
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
    // Offline that opened it (an Online of an action from before threadKey: its `resolves`).
    std::string thread = json_text(notification, "threadKey");
    if (thread.empty() && type == "Online") thread = json_text(notification, "resolves");
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
