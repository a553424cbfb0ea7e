// query_string.cpp — see query_string.hpp.
#include "http/query_string.hpp"

namespace actionloop {

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::string decode(const std::string& s, bool plus_is_space) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 &&
            hex_digit(s[i + 2]) >= 0) {
            out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
            i += 2;
        } else if (plus_is_space && s[i] == '+') {
            out += ' ';
        } else {
            out += s[i];
        }
    }
    return out;
}

}  // namespace

std::string percent_decode(const std::string& s) { return decode(s, false); }

std::string query_value(const std::string& query, const std::string& key) {
    std::size_t at = 0;
    while (at <= query.size()) {
        std::size_t end = query.find('&', at);
        if (end == std::string::npos) end = query.size();
        const std::string pair = query.substr(at, end - at);
        const auto eq = pair.find('=');
        if (decode(pair.substr(0, eq), true) == key) {
            return eq == std::string::npos ? std::string() : decode(pair.substr(eq + 1), true);
        }
        at = end + 1;
    }
    return {};
}

}  // namespace actionloop
