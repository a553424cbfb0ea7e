// parse_xray_trace: see xray_trace.hpp.
#include "xray_trace.hpp"

namespace actionloop {
namespace {

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

// `c` as a lowercase hex digit, or '\0' when it is none.
char lower_hex(char c) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) return c;
    if (c >= 'A' && c <= 'F') return static_cast<char>(c - 'A' + 'a');
    return '\0';
}

// Appends the lowercase form of `digits` to `out`; false when one is no hex digit.
bool append_hex(std::string_view digits, std::string& out) {
    for (char c : digits) {
        const char digit = lower_hex(c);
        if (digit == '\0') return false;
        out.push_back(digit);
    }
    return true;
}

// "1-" + 8 hex + "-" + 24 hex: the 32 digits, lowercase; "" when malformed or all zeros.
std::string trace_id_of_root(std::string_view root) {
    if (root.size() != 35 || root.substr(0, 2) != "1-" || root[10] != '-') return {};
    std::string id;
    id.reserve(32);
    if (!append_hex(root.substr(2, 8), id) || !append_hex(root.substr(11), id)) return {};
    if (id.find_first_not_of('0') == std::string::npos) return {};
    return id;
}

}  // namespace

std::optional<xray_trace> parse_xray_trace(std::string_view header) {
    std::string_view root;
    std::string_view sampled;
    bool has_root = false;
    bool has_sampled = false;
    while (!header.empty()) {
        const size_t end = header.find(';');
        const std::string_view field = header.substr(0, end);
        header = end == std::string_view::npos ? std::string_view() : header.substr(end + 1);
        const size_t equals = field.find('=');
        if (equals == std::string_view::npos) continue;
        const std::string_view key = trimmed(field.substr(0, equals));
        const std::string_view value = trimmed(field.substr(equals + 1));
        if (key == "Root" && !has_root) {
            root = value;
            has_root = true;
        } else if (key == "Sampled" && !has_sampled) {
            sampled = value;
            has_sampled = true;
        }
    }
    std::string trace_id = trace_id_of_root(root);
    if (trace_id.empty()) return std::nullopt;
    return xray_trace{std::move(trace_id), sampled == "1"};
}

}  // namespace actionloop
