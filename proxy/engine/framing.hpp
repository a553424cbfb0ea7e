// The pure parts of the /run path: turning a request body into one line, checking an
// answer line, finding the deadline, and cutting fd-3 output into lines under a cap.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "settings.hpp"

namespace actionloop {

/// Copies `body` without its '\n' bytes into `out`, then appends one '\n'.
void frame_request(std::string_view body, std::string& out);

/// True when `line` (with or without its trailing newline, surrounding whitespace allowed)
/// is exactly one JSON object or array.
bool is_object_or_array(std::string_view line);

/// The fast half of is_object_or_array(): true only when `text` is one JSON object or array
/// (surrounding whitespace allowed) made of printable-ASCII strings without escapes, numbers
/// without exponent, literals, at most 64 levels deep. False says nothing: the full parser
/// decides. Never true where nlohmann::json::accept is false (fuzz_framing checks it).
bool is_plain_json_container(std::string_view text);

/// The bounds of a JSON body that the proxy parses into a DOM (settings OW_MAX_JSON_DEPTH and
/// OW_MAX_JSON_MEMBERS; the defaults are theirs).
struct json_limits {
    size_t max_depth = 512;        // containers open at once: `[]` is 1, `{"a":[1]}` 2
    size_t max_members = 1000000;  // object members and array elements, every level counted
};

/// The limits the settings give.
inline json_limits json_limits_of(const settings& config) {
    return {config.max_json_depth, config.max_json_members};
}

/// Why `text` may not be parsed into a DOM, in words a client can act on: "nests deeper than
/// 512 levels (OW_MAX_JSON_DEPTH)", "has more than 1000000 members (OW_MAX_JSON_MEMBERS)";
/// nullopt when it is within both. One pass without recursion (scan::check_bounds), before
/// any parse; the parser then refuses whatever is not JSON.
std::optional<std::string> json_bounds_error(std::string_view text, const json_limits& limits);

/// The value of a top-level string (or number) field of a JSON object, without parsing the
/// whole body: nested objects, arrays and strings are skipped. Empty when absent or when
/// the body is not an object.
std::optional<std::string_view> find_top_level_field(std::string_view body, std::string_view name);

/// The deadline (epoch milliseconds) of a /run body, if it has a sensible one.
std::optional<long long> find_deadline_ms(std::string_view body);
/// The same for the `deadline` field's text (find_top_level_field's): 1 to 18 digits.
std::optional<long long> deadline_ms_of(std::string_view text);

/// Appends the member `"name":"text"` (both plain: no character that needs escaping) to the
/// JSON object `body`, before its closing brace. False, and `body` untouched, when `body` does
/// not start with `{` and end with `}` (whitespace aside): not an object, nothing to add to.
bool append_string_member(std::string& body, std::string_view name, std::string_view text);

/// Accumulates bytes read from fd 3 and hands out complete lines.
class line_buffer {
public:
    explicit line_buffer(size_t max_line) : max_line_(max_line) {}

    /// Appends `n` bytes; returns true when a complete line is available.
    bool append(const char* data, size_t n);
    /// True once the first line (complete or not, newline excluded) is longer than the cap.
    bool overflowed() const {
        return (newline_ == std::string::npos ? data_.size() : newline_) > max_line_;
    }
    /// Moves the first complete line (with its '\n') into `line`; returns the number of
    /// bytes that followed it (extra output, discarded).
    size_t take_line(std::string& line);
    /// True when a complete line is buffered.
    bool has_line() const { return newline_ != std::string::npos; }
    /// Moves the first complete line (with its '\n') into `line` and keeps what followed
    /// it (the next answers of a pipelined action).
    void take_next_line(std::string& line);
    void clear();
    size_t buffered() const { return data_.size(); }

private:
    std::string data_;
    size_t newline_ = std::string::npos;
    size_t max_line_;
};

}  // namespace actionloop
