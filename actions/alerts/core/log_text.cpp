// log_text.cpp — log fields and free text that stay on their line.
#include "core/log_text.hpp"

namespace alerts {

namespace {

bool is_control(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
}

void append_control(std::string& out, char c) {
    switch (c) {
        case '\n':
            out += "\\n";
            return;
        case '\r':
            out += "\\r";
            return;
        case '\t':
            out += "\\t";
            return;
        default:
            break;
    }
    static constexpr char HEX[] = "0123456789abcdef";
    const auto u = static_cast<unsigned char>(c);
    out += "\\x";
    out += HEX[u >> 4];
    out += HEX[u & 0xf];
}

bool needs_quotes(std::string_view value) {
    if (value.empty()) return true;
    for (char c : value) {
        if (c == ' ' || c == '"' || c == '=' || c == '\\' || is_control(c)) return true;
    }
    return false;
}

}  // namespace

void append_log_field(std::string& line, std::string_view key, std::string_view value) {
    if (!line.empty()) line += ' ';
    line.append(key).append("=");
    if (!needs_quotes(value)) {
        line.append(value);
        return;
    }
    line += '"';
    for (char c : value) {
        if (is_control(c)) {
            append_control(line, c);
            continue;
        }
        if (c == '"' || c == '\\') line += '\\';
        line += c;
    }
    line += '"';
}

std::string log_safe(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (is_control(c)) {
            append_control(out, c);
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace alerts
