// batch_text.cpp — a small strict JSON reader specialised for the batch: one pass, no DOM, no
// allocation per ETag (strings are views into the text unless they have escapes).
#include "batch_text.hpp"

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace alerts {

namespace {

using kind = etag_fields::kind;

constexpr int MAX_DEPTH = 512;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

void append_utf8(std::string& out, unsigned cp) {
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

class reader {
public:
    reader(std::string_view text, std::deque<std::string>& arena) : s_(text), arena_(arena) {}

    /// The next significant character ('\0' at the end), after whitespace.
    char peek() {
        while (i_ < s_.size() &&
               (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) {
            ++i_;
        }
        return i_ < s_.size() ? s_[i_] : '\0';
    }

    bool consume(char c) {
        if (peek() != c) return false;
        ++i_;
        return true;
    }

    void expect(char c) {
        if (!consume(c)) fail(std::string("expected '") + c + "'");
    }

    bool at_end() { return peek() == '\0' && i_ == s_.size(); }
    std::size_t position() const { return i_; }
    std::string_view slice(std::size_t from) const { return s_.substr(from, i_ - from); }

    std::string_view string() {
        expect('"');
        const std::size_t start = i_;
        for (; i_ < s_.size(); ++i_) {
            const char c = s_[i_];
            if (c == '"') return s_.substr(start, i_++ - start);
            if (c == '\\') return escaped_string(start);
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
        }
        fail("unterminated string");
    }

    double number() {
        peek();
        const std::size_t start = i_;
        scan_number();
        double value = 0;
        const char* first = s_.data() + start;
        const char* last = s_.data() + i_;
        const auto [end, ec] = std::from_chars(first, last, value);
        if (ec == std::errc::result_out_of_range) {
            // Overflow gives inf (then rejected as not finite), underflow 0, as strtod does.
            return std::strtod(std::string(first, last).c_str(), nullptr);
        }
        if (ec != std::errc() || end != last) fail("invalid number");
        return value;
    }

    /// Skips any value, strictly.
    void skip(int depth = 0) {
        if (depth > MAX_DEPTH) fail("nested too deep");
        const char c = peek();
        if (c == '"') {
            string();
        } else if (c == '{') {
            skip_object(depth);
        } else if (c == '[') {
            skip_array(depth);
        } else if (c == '-' || is_digit(c)) {
            scan_number();
        } else if (!literal("true") && !literal("false") && !literal("null")) {
            fail("unexpected character");
        }
    }

    bool literal(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) return false;
        i_ += word.size();
        return true;
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw std::invalid_argument("value: invalid JSON at offset " + std::to_string(i_) + ": " +
                                    what);
    }

private:
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
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            digits();
        }
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
    std::string_view escaped_string(std::size_t start) {
        std::string& out = arena_.emplace_back(s_.substr(start, i_ - start));
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
    std::size_t i_ = 0;
    std::deque<std::string>& arena_;
};

etag_fields::member read_member(reader& r) {
    etag_fields::member m;
    const char c = r.peek();
    if (c == '"') {
        m.type = kind::string;
        m.text = r.string();
    } else if (c == '-' || is_digit(c)) {
        m.type = kind::number;
        m.number = r.number();
    } else {
        m.type = kind::other;
        r.skip(1);
    }
    return m;
}

// One element of "etags": an object's known members, or a rejection for anything else.
void read_etag(reader& r, std::size_t index, parsed_batch& out) {
    if (r.peek() != '{') {
        r.skip(1);
        out.rejected.push_back({index, "etag " + std::to_string(index) + ": must be an object"});
        return;
    }
    r.expect('{');
    etag_fields f;
    if (!r.consume('}')) {
        do {
            const int slot = etag_fields::index(r.string());
            r.expect(':');
            if (slot >= 0) {
                f.values[slot] = read_member(r);
            } else {
                r.skip(1);
            }
        } while (r.consume(','));
        r.expect('}');
    }
    add_etag(f, index, out);
}

void read_etags(reader& r, parsed_batch& out) {
    if (r.peek() != '[') throw std::invalid_argument("'etags' must be an array");
    // A repeated "etags" member replaces the earlier one, as in a DOM.
    out.clear();
    r.expect('[');
    if (r.consume(']')) return;
    std::size_t index = 0;
    do {
        read_etag(r, index++, out);
    } while (r.consume(','));
    r.expect(']');
}

void read_member_of_value(reader& r, std::string_view key, parsed_batch& out,
                          value_members& members) {
    if (key == "etags") {
        read_etags(r, out);
    } else if (key == "now") {
        const char c = r.peek();
        if (c != '-' && !is_digit(c)) throw std::invalid_argument("'now' must be a number");
        members.now = r.number();
        members.has_now = true;
    } else if (key == "config") {
        const std::size_t start = (r.peek(), r.position());
        r.skip(1);
        const std::string_view text = r.slice(start);
        members.config = text == "null" ? std::string_view() : text;
    } else {
        r.skip(1);
    }
}

}  // namespace

void parse_value_text(std::string_view text, parsed_batch& out, value_members& members) {
    out.clear();
    members = value_members{};
    reader r(text, out.unescaped);
    if (r.peek() != '{') {
        r.skip();  // invalid JSON is reported as such
        throw std::invalid_argument("the activation value must be an object");
    }
    r.expect('{');
    if (!r.consume('}')) {
        do {
            const std::string_view key = r.string();
            r.expect(':');
            read_member_of_value(r, key, out, members);
        } while (r.consume(','));
        r.expect('}');
    }
    if (!r.at_end()) r.fail("unexpected text after the value");
}

}  // namespace alerts
