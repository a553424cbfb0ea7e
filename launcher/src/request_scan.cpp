// scan_request_line: see request_scan.hpp.
#include "request_scan.hpp"

#include <actionloop/detail/json_scan.hpp>

#include <algorithm>
#include <charconv>
#include <system_error>

namespace actionloop {
namespace {

// A JSON string of printable ASCII without escapes, with its quotes: its text is exactly the
// bytes between them, and nlohmann would read the same (no UTF-8 to check).
bool is_plain_string(std::string_view raw) {
    if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return false;
    return std::all_of(raw.begin() + 1, raw.end() - 1,
                       [](char c) { return c >= 0x20 && c <= 0x7e && c != '\\' && c != '"'; });
}

// Whether the integer-looking `raw` (JSON: no '.', 'e' or 'E') is one nlohmann would read as an
// integer (number_integer or number_unsigned) that does not fit a long long: read through the
// DOM, its value wraps; the fast path leaves it to the DOM.
bool is_integer_out_of_range(std::string_view raw) {
    if (raw.find_first_of(".eE") != std::string_view::npos) return false;
    long long value = 0;
    return std::from_chars(raw.data(), raw.data() + raw.size(), value).ec ==
           std::errc::result_out_of_range;
}

}  // namespace

std::optional<long long> integer_of(std::string_view raw) {
    long long value = 0;
    const char* last = raw.data() + raw.size();
    const auto [end, ec] = std::from_chars(raw.data(), last, value);
    if (ec != std::errc() || end != last) return std::nullopt;
    return value;
}

std::optional<request_parts> scan_request_line(std::string_view line) {
    // nlohmann reads a NUL as the end of its input: a member's text cut at one would pass
    // where the whole line does not.
    if (line.find('\0') != std::string_view::npos) return std::nullopt;
    request_parts parts;
    std::optional<std::string_view> value;
    bool plain = true;
    const bool object =
        scan::for_each_member(line, [&](std::string_view key, std::string_view raw) {
            plain = is_plain_string(key) && parts.members.size() < FAST_PATH_MEMBERS;
            if (!plain) return false;
            const std::string_view name = plain_text(key);
            if (name == "value") {
                plain = !value.has_value();
                value = raw;
            } else if (raw.front() == '"') {
                plain = is_plain_string(raw);
            } else {
                plain = nlohmann::json::accept(raw) &&
                        !(name == "deadline" && is_integer_out_of_range(raw));
            }
            if (plain && name != "value") parts.members.emplace_back(name, raw);
            return plain;
        });
    if (!object || !plain) return std::nullopt;
    std::sort(parts.members.begin(), parts.members.end());
    const auto twice =
        std::adjacent_find(parts.members.begin(), parts.members.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; });
    if (twice != parts.members.end()) return std::nullopt;
    if (value) {
        nlohmann::json parsed = nlohmann::json::parse(*value, nullptr, false);
        if (parsed.is_discarded()) return std::nullopt;
        parts.value = std::move(parsed);
    }
    return parts;
}

}  // namespace actionloop
