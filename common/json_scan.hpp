// json_scan.hpp — the one JSON scanner of the proxy and the launcher: the top-level members of
// an object found without building a DOM. Strings are skipped with memchr, containers by
// depth; nested values and primitives are not validated here. Its users:
//   the proxy: a /run request's `deadline` (engine/framing.cpp), whether an answer has a
//              top-level `error` (ops/metrics.cpp)
//   the launcher: a request line's members for the raw entry point (launcher/src/loop.cpp)
// Header-only, built into each: both have common/ as a private include directory.
#pragma once

#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>

namespace actionloop::scan {

inline constexpr size_t npos = std::string_view::npos;

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline size_t skip_space(std::string_view s, size_t i) {
    while (i < s.size() && is_space(s[i])) ++i;
    return i;
}

/// Whether the quote at s[quote] is escaped: preceded by an odd run of backslashes (the run
/// stops at the opening quote at the latest).
inline bool is_escaped(const char* data, size_t quote) {
    size_t run = quote;
    while (data[run - 1] == '\\') --run;
    return (quote - run) % 2 != 0;
}

/// Index just past the string that starts at s[i] == '"', or npos. Its first 16 bytes are
/// looked at one by one (keys and short values end there, where a call to memchr costs more
/// than it saves); a longer string is searched with memchr.
inline size_t skip_string(std::string_view s, size_t i) {
    const char* data = s.data();
    size_t pos = i + 1;
    const size_t near = s.size() - pos < 16 ? s.size() : pos + 16;
    for (; pos < near; ++pos) {
        if (data[pos] == '"' && !is_escaped(data, pos)) return pos + 1;
    }
    while (pos < s.size()) {
        const void* hit = std::memchr(data + pos, '"', s.size() - pos);
        if (hit == nullptr) return npos;
        const size_t quote = static_cast<size_t>(static_cast<const char*>(hit) - data);
        if (!is_escaped(data, quote)) return quote + 1;
        pos = quote + 1;
    }
    return npos;
}

/// Index just past the object or array that starts at s[i], or npos.
inline size_t skip_container(std::string_view s, size_t i) {
    size_t depth = 0;
    for (; i < s.size(); ++i) {
        switch (s[i]) {
            case '"':
                i = skip_string(s, i);
                if (i == npos) return npos;
                --i;
                break;
            case '{':
            case '[':
                ++depth;
                break;
            case '}':
            case ']':
                if (--depth == 0) return i + 1;
                break;
            default:
                break;
        }
    }
    return npos;
}

/// Index just past the value that starts at s[i], or npos.
inline size_t skip_value(std::string_view s, size_t i) {
    if (i >= s.size()) return npos;
    if (s[i] == '"') return skip_string(s, i);
    if (s[i] == '{' || s[i] == '[') return skip_container(s, i);
    const size_t start = i;
    while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_space(s[i])) ++i;
    return i > start ? i : npos;
}

/// Calls visit(key, value) for each member of the object `line`, both as raw JSON text (the
/// key with its quotes). A visit that returns bool stops the walk by returning false (then
/// the result is true: the rest is not looked at). False when `line` is not one object (then
/// some members may have been visited already).
template <class Visit>
bool for_each_member(std::string_view line, Visit&& visit) {
    size_t i = skip_space(line, 0);
    if (i >= line.size() || line[i] != '{') return false;
    i = skip_space(line, i + 1);
    if (i < line.size() && line[i] == '}') return skip_space(line, i + 1) == line.size();
    while (i < line.size() && line[i] == '"') {
        const size_t key_end = skip_string(line, i);
        if (key_end == npos) return false;
        const std::string_view key = line.substr(i, key_end - i);
        i = skip_space(line, key_end);
        if (i >= line.size() || line[i] != ':') return false;
        i = skip_space(line, i + 1);
        const size_t value_end = skip_value(line, i);
        if (value_end == npos) return false;
        const std::string_view value = line.substr(i, value_end - i);
        if constexpr (std::is_same_v<decltype(visit(key, value)), bool>) {
            if (!visit(key, value)) return true;
        } else {
            visit(key, value);
        }
        i = skip_space(line, value_end);
        if (i < line.size() && line[i] == '}') return skip_space(line, i + 1) == line.size();
        if (i >= line.size() || line[i] != ',') return false;
        i = skip_space(line, i + 1);
    }
    return false;
}

/// The raw JSON text of the first top-level member `name` (unescaped name, compared with the
/// key's raw text) of the object `line`; nullopt when absent, or when the object is malformed
/// before it.
inline std::optional<std::string_view> find_member(std::string_view line, std::string_view name) {
    std::optional<std::string_view> found;
    for_each_member(line, [&](std::string_view key, std::string_view value) {
        if (key.size() == name.size() + 2 && key.substr(1, name.size()) == name) {
            found = value;
            return false;
        }
        return true;
    });
    return found;
}

}  // namespace actionloop::scan
