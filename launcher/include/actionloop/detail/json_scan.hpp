// actionloop/detail/json_scan.hpp — the one JSON scanner of the project, in two modes that share
// their lexing (not part of the action API: actions use nlohmann::json; see docs/SDK.md):
//   skim:   the top-level members of an object, found without a DOM; strings are skipped
//           with memchr, containers by depth, nothing nested is validated. For text that
//           another part checks, when only a few members matter: a /run request's `deadline`
//           (proxy/engine/framing.cpp), an answer's top-level `error` (proxy/ops/metrics.cpp),
//           a request line's members for both entry points (launcher/src/loop.cpp,
//           request_scan.cpp, which checks the members it keeps).
//   reader: strict JSON (RFC 8259; string bytes are not checked for UTF-8), one pass, no DOM,
//           strings as views into the text unless escaped. For text nothing else checks: the
//           alert actions' batches (actions/alerts/core/batch_text.cpp), and, in its `plain`
//           subset, the proxy's one-pass check of an answer (framing.cpp).
// and, lexed as skim does, check_bounds: the depth and member count of a text before a DOM is
// built from it (the proxy's bodies, framing.cpp json_bounds_error; the launcher's line).
// Header-only; installed with the SDK so that actions built from their sources by `compile`
// (the alert monitor is one) find it. tests/unit/launcher/json_scan_test.cpp; the fuzz targets
// compare both modes with nlohmann::json.
#pragma once

#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
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

/// The size of a JSON text that a DOM may be built from: how deeply it nests (the containers
/// open at once: `[]` is 1, `{"a":[1]}` is 2, a scalar 0) and how many members it has (object
/// members plus array elements, at every level: `{"a":[1,2]}` has 3).
struct bounds {
    size_t depth;
    size_t members;
};

enum class excess { none, depth, members };

/// Whether `text` goes past `limit`, found without a DOM and without recursion: one pass
/// (strings skipped as in skim), stopping at the first container too deep or the first member
/// too many. Validates nothing: a text that is not JSON may pass, and the parser that follows
/// refuses it; for JSON, the counts are exact.
inline excess check_bounds(std::string_view s, bounds limit) {
    size_t depth = 0;
    size_t members = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '"') {
            i = skip_string(s, i);
            if (i == npos) return excess::none;  // unterminated: the parser's to refuse
            --i;
        } else if (c == '{' || c == '[') {
            if (++depth > limit.depth) return excess::depth;
            const size_t next = skip_space(s, i + 1);
            // A member starts here unless the container is empty.
            if (next < s.size() && s[next] != '}' && s[next] != ']' && ++members > limit.members) {
                return excess::members;
            }
        } else if (c == '}' || c == ']') {
            if (depth > 0) --depth;
        } else if (c == ',' && depth > 0 && ++members > limit.members) {
            return excess::members;
        }
    }
    return excess::none;
}

/// The words for an excess of check_bounds, after the name of the text: "nests deeper than
/// 512 levels (OW_MAX_JSON_DEPTH)", "has more than 1000000 members (OW_MAX_JSON_MEMBERS)"
/// (the settings of the proxy and of the launcher that bound them), "" for none.
inline std::string excess_text(excess e, bounds limit) {
    if (e == excess::depth) {
        return "nests deeper than " + std::to_string(limit.depth) + " levels (OW_MAX_JSON_DEPTH)";
    }
    if (e == excess::members) {
        return "has more than " + std::to_string(limit.members) + " members (OW_MAX_JSON_MEMBERS)";
    }
    return {};
}

/// Thrown by reader: "<context>invalid JSON at offset N: <what>".
class syntax_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

/// A strict JSON reader over one text (see the top of this file). Every method throws
/// syntax_error at the first byte that is not JSON.
class reader {
public:
    struct options {
        /// Nesting below the top level that is accepted.
        int max_depth = 512;
        /// The plain subset only: strings of printable ASCII without escapes, numbers without
        /// exponent and of at most 30 characters (surely finite as doubles). Anything else is
        /// refused as if it were not JSON: the caller has a full parser to ask.
        bool plain = false;
        /// Where strings with escapes are decoded (views into it are handed out). Null: an
        /// escape is refused.
        std::deque<std::string>* arena = nullptr;
        /// Starts every error message ("value: ").
        std::string_view context;
    };

    reader(std::string_view text, options opts) : s_(text), o_(opts) {}

    /// The next significant character ('\0' at the end), after whitespace.
    char peek() {
        i_ = skip_space(s_, i_);
        return i_ < s_.size() ? s_[i_] : '\0';
    }
    bool consume(char c) {
        if (peek() != c) return false;
        ++i_;
        return true;
    }
    void expect(char c) {
        if (!consume(c)) fail_expected(c);
    }
    bool at_end() { return peek() == '\0' && i_ == s_.size(); }
    size_t position() const { return i_; }
    /// The text from `from` to the current position.
    std::string_view slice(size_t from) const { return s_.substr(from, i_ - from); }

    /// A string's value: a view into the text, or into the arena when it has escapes.
    std::string_view string() {
        expect('"');
        const size_t start = i_;
        // The bytes that end the fast loop: '"', '\\', control characters, and in the plain
        // subset anything outside printable ASCII.
        const bool* stop = o_.plain ? stops<true>() : stops<false>();
        const char* data = s_.data();
        size_t i = i_;
        while (i < s_.size() && !stop[static_cast<unsigned char>(data[i])]) ++i;
        i_ = i;
        if (i_ >= s_.size()) fail("unterminated string");
        const char c = data[i_];
        if (c == '"') return s_.substr(start, i_++ - start);
        if (c == '\\') {
            if (o_.plain || o_.arena == nullptr) fail("escape outside the plain subset");
            return escaped_string(start);
        }
        if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
        fail("byte outside the plain subset");
    }

    /// A number's value (an overflow gives inf, an underflow 0, as strtod does).
    double number() {
        peek();
        const size_t start = i_;
        scan_number();
        double value = 0;
        const char* first = s_.data() + start;
        const char* last = s_.data() + i_;
        const auto [end, ec] = std::from_chars(first, last, value);
        if (ec == std::errc::result_out_of_range) {
            return std::strtod(std::string(first, last).c_str(), nullptr);
        }
        if (ec != std::errc() || end != last) fail("invalid number");
        return value;
    }

    /// Skips any value, strictly; `depth` is the nesting of the value.
    void skip(int depth = 0) {
        if (depth > o_.max_depth) fail("nested too deep");
        const char c = peek();
        if (c == '"') {
            string();
        } else if (c == '{') {
            skip_object(depth);
        } else if (c == '[') {
            skip_array(depth);
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            scan_number();
        } else if (!literal("true") && !literal("false") && !literal("null")) {
            fail("unexpected character");
        }
    }

    // Out of line and cold: the error texts are not built in the hot paths.
    [[noreturn, gnu::noinline, gnu::cold]] void fail(const char* what) const {
        throw syntax_error(std::string(o_.context) + "invalid JSON at offset " +
                           std::to_string(i_) + ": " + what);
    }
    [[noreturn, gnu::noinline, gnu::cold]] void fail_expected(char c) const {
        const char what[] = {'e', 'x', 'p', 'e', 'c', 't', 'e', 'd', ' ', '\'', c, '\'', '\0'};
        fail(what);
    }

private:
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }

    template <bool PLAIN>
    static const bool* stops() {
        static const auto TABLE = [] {
            std::array<bool, 256> t{};
            for (int c = 0; c < 256; ++c) {
                t[c] = c == '"' || c == '\\' || c < 0x20 || (PLAIN && c >= 0x7f);
            }
            return t;
        }();
        return TABLE.data();
    }

    bool literal(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) return false;
        i_ += word.size();
        return true;
    }

    void skip_object(int depth) {
        expect('{');
        if (consume('}')) return;
        do {
            string();
            expect(':');
            skip(depth + 1);
        } while (consume(','));
        expect('}');
    }

    void skip_array(int depth) {
        expect('[');
        if (consume(']')) return;
        do {
            skip(depth + 1);
        } while (consume(','));
        expect(']');
    }

    void digits() {
        if (i_ >= s_.size() || !is_digit(s_[i_])) fail("invalid number");
        while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
    }

    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    void scan_number() {
        peek();
        const size_t start = i_;
        if (i_ < s_.size() && s_[i_] == '-') ++i_;
        if (i_ < s_.size() && s_[i_] == '0') {
            ++i_;
        } else {
            digits();
        }
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            digits();
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            if (o_.plain) fail("exponent outside the plain subset");
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            digits();
        }
        if (o_.plain && i_ - start > 30) fail("number outside the plain subset");
    }

    static int hex_value(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    unsigned hex4() {
        if (s_.size() - i_ < 4) fail("invalid \\u escape");
        unsigned cp = 0;
        for (int k = 0; k < 4; ++k) {
            const int h = hex_value(s_[i_++]);
            if (h < 0) fail("invalid \\u escape");
            cp = cp * 16 + static_cast<unsigned>(h);
        }
        return cp;
    }

    unsigned code_point() {
        const unsigned cp = hex4();
        if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate");
        if (cp < 0xD800 || cp > 0xDBFF) return cp;
        if (s_.substr(i_, 2) != "\\u") fail("lone high surrogate");
        i_ += 2;
        const unsigned low = hex4();
        if (low < 0xDC00 || low > 0xDFFF) fail("invalid surrogate pair");
        return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }

    void escape(std::string& out) {
        if (i_ >= s_.size()) fail("unterminated string");
        const char c = s_[i_++];
        switch (c) {
            case '"':
            case '\\':
            case '/':
                out.push_back(c);
                break;
            case 'b':
                out.push_back('\b');
                break;
            case 'f':
                out.push_back('\f');
                break;
            case 'n':
                out.push_back('\n');
                break;
            case 'r':
                out.push_back('\r');
                break;
            case 't':
                out.push_back('\t');
                break;
            case 'u':
                append_utf8(out, code_point());
                break;
            default:
                fail("invalid escape");
        }
    }

    // The slow path, from the first backslash: decoded into the arena.
    std::string_view escaped_string(size_t start) {
        std::string& out = o_.arena->emplace_back(s_.substr(start, i_ - start));
        while (i_ < s_.size()) {
            const char c = s_[i_++];
            if (c == '"') return out;
            if (c == '\\') {
                escape(out);
            } else if (static_cast<unsigned char>(c) < 0x20) {
                fail("control character in a string");
            } else {
                out.push_back(c);
            }
        }
        fail("unterminated string");
    }

    std::string_view s_;
    size_t i_ = 0;
    options o_;
};

}  // namespace actionloop::scan
