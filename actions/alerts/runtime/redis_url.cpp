// redis_url.cpp — parsing of ALERT_REDIS_URL and ALERT_REDIS_SENTINELS.
#include "runtime/redis_url.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <stdexcept>

namespace alerts {

std::string redact_url(std::string_view url) {
    const std::size_t scheme = url.find("://");
    const std::size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
    // The last '@': a password may hold '/' or '@' (unencoded); a path with '@' is redacted
    // too (a harmless loss).
    const std::size_t at = url.rfind('@');
    if (at == std::string_view::npos || at < start) return std::string(url);
    const std::size_t colon = url.substr(0, at).find(':', start);
    const std::size_t secret = colon == std::string_view::npos ? start : colon + 1;
    return std::string(url.substr(0, secret)) + "***" + std::string(url.substr(at));
}

namespace {

int parse_number(std::string_view s, int lo, int hi, const char* what, std::string_view url) {
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) {
        throw std::invalid_argument("ALERT_REDIS_URL '" + redact_url(url) + "': " + what +
                                    " must be a number from " + std::to_string(lo) + " to " +
                                    std::to_string(hi));
    }
    return v;
}

[[noreturn]] void bad(std::string_view url) {
    throw std::invalid_argument("ALERT_REDIS_URL '" + redact_url(url) +
                                "' is not redis://HOST[:PORT][/DB] or unix:///PATH");
}

// User info (`user:password@`): refused, naming where the password goes.
void refuse_user_info(std::string_view url, std::string_view rest) {
    if (rest.find('@') == std::string_view::npos) return;
    throw std::invalid_argument("ALERT_REDIS_URL '" + redact_url(url) +
                                "': no user or password in the URL (set ALERT_REDIS_PASSWORD)");
}

}  // namespace

redis_url parse_redis_url(std::string_view text) {
    redis_url url;
    url.text = redact_url(text);
    constexpr std::string_view TCP = "redis://";
    constexpr std::string_view UNIX = "unix://";
    if (text.substr(0, UNIX.size()) == UNIX) {
        std::string_view path = text.substr(UNIX.size());
        if (auto q = path.find("?db="); q != std::string_view::npos) {
            url.db = parse_number(path.substr(q + 4), 0, 65535, "the database", text);
            path = path.substr(0, q);
        }
        if (path.empty() || path[0] != '/') bad(text);
        url.socket = std::string(path);
        return url;
    }
    if (text.substr(0, TCP.size()) != TCP) bad(text);
    std::string_view rest = text.substr(TCP.size());
    refuse_user_info(text, rest);
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        url.db = parse_number(rest.substr(slash + 1), 0, 65535, "the database", text);
        rest = rest.substr(0, slash);
    }
    if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
        url.port = parse_number(rest.substr(colon + 1), 1, 65535, "the port", text);
        rest = rest.substr(0, colon);
    }
    if (rest.empty()) bad(text);
    url.host = std::string(rest);
    return url;
}

namespace {

// The list with every item's user info redacted (an item `user:password@host:port`).
std::string redact_sentinels(std::string_view list) {
    std::string out;
    while (true) {
        const std::size_t comma = list.find(',');
        out += redact_url(list.substr(0, comma));
        if (comma == std::string_view::npos) return out;
        out += ',';
        list.remove_prefix(comma + 1);
    }
}

}  // namespace

redis_url parse_redis_sentinels(std::string_view sentinels, std::string_view master) {
    const auto bad_list = [&](const std::string& what) {
        throw std::invalid_argument("ALERT_REDIS_SENTINELS '" + redact_sentinels(sentinels) +
                                    "': " + what + " (HOST:PORT,HOST:PORT,...)");
    };
    if (master.empty()) {
        throw std::invalid_argument(
            "ALERT_REDIS_SENTINELS is set but ALERT_REDIS_MASTER is not: name the primary the "
            "sentinels watch (their `sentinel monitor NAME ...`)");
    }
    redis_url url;
    url.master = std::string(master);
    url.text = "sentinel master " + url.master;
    std::string_view rest = sentinels;
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        const std::size_t colon = item.rfind(':');
        if (item.find('@') != std::string_view::npos) {
            bad_list("'" + redact_url(item) +
                     "': no user or password here (set ALERT_REDIS_SENTINEL_PASSWORD)");
        }
        if (item.empty() || colon == std::string_view::npos || colon == 0) {
            bad_list("'" + std::string(item) + "' is not HOST:PORT");
        }
        int port = 0;
        const std::string_view digits = item.substr(colon + 1);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
            port < 1 || port > 65535) {
            bad_list("the port of '" + std::string(item) + "' must be a number from 1 to 65535");
        }
        url.sentinels.push_back({std::string(item.substr(0, colon)), port});
    }
    if (url.sentinels.empty()) bad_list("no sentinel given");
    return url;
}

std::string sentinel_list(const redis_url& url) {
    std::string out;
    for (const redis_address& s : url.sentinels) {
        if (!out.empty()) out += ',';
        out += s.host + ":" + std::to_string(s.port);
    }
    return out;
}

namespace {

std::string text_of(const env_lookup& env, const char* name) {
    const char* v = env(name);
    return v ? v : "";
}

// One user and password pair: NAME_USER, NAME_PASSWORD or NAME_PASSWORD_FILE.
void read_pair(const env_lookup& env, const std::string& name, std::string& user,
               std::string& password) {
    const std::string direct = text_of(env, (name + "_PASSWORD").c_str());
    const std::string file = text_of(env, (name + "_PASSWORD_FILE").c_str());
    if (!direct.empty() && !file.empty()) {
        throw std::invalid_argument("set " + name + "_PASSWORD or " + name +
                                    "_PASSWORD_FILE, not both");
    }
    password = file.empty() ? direct : read_secret_file(name + "_PASSWORD_FILE", file);
    user = text_of(env, (name + "_USER").c_str());
    if (!user.empty() && password.empty()) {
        throw std::invalid_argument(name + "_USER is set without a password: set " + name +
                                    "_PASSWORD_FILE (or " + name + "_PASSWORD)");
    }
}

}  // namespace

void read_redis_credentials(redis_url& url, const env_lookup& env) {
    read_pair(env, "ALERT_REDIS", url.user, url.password);
    read_pair(env, "ALERT_REDIS_SENTINEL", url.sentinel_user, url.sentinel_password);
}

void read_redis_credentials(redis_url& url) {
    read_redis_credentials(url, [](const char* name) { return std::getenv(name); });
}

}  // namespace alerts
