// A request line read without a DOM of the whole line: most of a line is the platform's own
// strings (activation id, action name, namespace, deadline…), and building them into a
// nlohmann::json object cost the launcher more per activation than a small action's work.
// Only `value` becomes a DOM. This is the fast path for the lines the platforms send; any line
// it does not take is read by the DOM path as before (handle_request, loop.cpp), so answers
// and error messages never depend on which path read a line.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace actionloop {

/// The members of one request line, as its DOM would give them.
struct request_parts {
    /// `value`, parsed (strictly, by nlohmann::json); nullopt when the line has none.
    std::optional<nlohmann::json> value;
    /// Every other member: its key, and its raw JSON text (a string with its quotes), in the
    /// order of the keys (the order a DOM object's members are visited in).
    std::vector<std::pair<std::string_view, std::string_view>> members;
};

/// The most members a line may have for the fast path (the platforms send about ten).
inline constexpr size_t FAST_PATH_MEMBERS = 64;

/// The parts of `line` when it is a plain request: one JSON object without a NUL byte, of at most
/// FAST_PATH_MEMBERS members, no key twice, every key and every string member printable ASCII
/// without escapes, every other member valid JSON (nlohmann's rules), a numeric `deadline`
/// within a long long when it is an integer. nullopt for anything else, `value` included when
/// nlohmann refuses it: the caller then reads the line with the DOM. Views into `line`.
std::optional<request_parts> scan_request_line(std::string_view line);

/// A string member's text (its raw JSON without the quotes: no escapes on the fast path).
inline std::string_view plain_text(std::string_view raw) { return raw.substr(1, raw.size() - 2); }

/// A numeric member's value when it is an integer that fits a long long.
std::optional<long long> integer_of(std::string_view raw);

}  // namespace actionloop
