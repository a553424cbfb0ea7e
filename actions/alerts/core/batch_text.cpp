// batch_text.cpp — the batch read with the project's strict JSON reader (actionloop/detail/
// json_scan.hpp): one pass, no DOM, no allocation per ETag (strings are views into the text
// unless they have escapes).
#include "core/batch_text.hpp"

#include <actionloop/detail/json_scan.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace alerts {

namespace {

using kind = etag_fields::kind;

using actionloop::scan::reader;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

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

[[noreturn]] void over_bound(std::size_t max_etags) {
    const std::string n = std::to_string(max_etags);
    throw std::invalid_argument("the batch has more than " + n +
                                " ETags (ALERT_MAX_BATCH_ETAGS): nothing was applied; send them "
                                "as batches of at most " +
                                n + " ETags, in order");
}

void read_etags(reader& r, parsed_batch& out, std::size_t max_etags) {
    if (r.peek() != '[') throw std::invalid_argument("'etags' must be an array");
    // A repeated "etags" member replaces the earlier one, as in a DOM.
    out.clear();
    r.expect('[');
    if (r.consume(']')) return;
    std::size_t index = 0;
    do {
        if (index == max_etags) over_bound(max_etags);
        read_etag(r, index++, out);
    } while (r.consume(','));
    r.expect(']');
}

void read_member_of_value(reader& r, std::string_view key, parsed_batch& out,
                          value_members& members, std::size_t max_etags) {
    if (key == "etags") {
        read_etags(r, out, max_etags);
    } else if (key == "now") {
        const char c = r.peek();
        if (c != '-' && !is_digit(c)) throw std::invalid_argument("'now' must be a number");
        members.now = r.number();
        if (!std::isfinite(members.now)) throw std::invalid_argument("'now' must be a number");
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

void parse_value_text(std::string_view text, parsed_batch& out, value_members& members,
                      std::size_t max_etags) {
    out.clear();
    members = value_members{};
    reader r(text, {512, false, &out.unescaped, "value: "});
    if (r.peek() != '{') {
        r.skip();  // invalid JSON is reported as such
        throw std::invalid_argument("the activation value must be an object");
    }
    r.expect('{');
    if (!r.consume('}')) {
        do {
            const std::string_view key = r.string();
            r.expect(':');
            read_member_of_value(r, key, out, members, max_etags);
        } while (r.consume(','));
        r.expect('}');
    }
    if (!r.at_end()) r.fail("unexpected text after the value");
}

}  // namespace alerts
