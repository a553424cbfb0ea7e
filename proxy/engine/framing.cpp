// Request framing, answer validation and the fd-3 line buffer.
#include "engine/framing.hpp"

#include <cstring>

#include <nlohmann/json.hpp>

#include "json_scan.hpp"

namespace actionloop {
namespace {

using scan::skip_space;

constexpr size_t NOT_PLAIN = std::string_view::npos;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Index past a number at s[i] without exponent and of at most 30 characters (so surely finite
// as a double: nlohmann refuses a number that overflows), or NOT_PLAIN.
size_t skip_plain_number(std::string_view s, size_t i) {
    const size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    if (i >= s.size()) return NOT_PLAIN;
    if (s[i] == '0') {
        ++i;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < s.size() && is_digit(s[i])) ++i;
    } else {
        return NOT_PLAIN;
    }
    if (i < s.size() && s[i] == '.') {
        const size_t digits = ++i;
        while (i < s.size() && is_digit(s[i])) ++i;
        if (i == digits) return NOT_PLAIN;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) return NOT_PLAIN;
    return i - start <= 30 ? i : NOT_PLAIN;
}

// Index past a string at s[i] == '"' of printable ASCII without escapes, or NOT_PLAIN.
size_t skip_plain_string(std::string_view s, size_t i) {
    for (++i; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '"') return i + 1;
        if (c == '\\' || c < 0x20 || c >= 0x7f) return NOT_PLAIN;
    }
    return NOT_PLAIN;
}

}  // namespace

bool is_plain_json_container(std::string_view s) {
    enum class expect { value, value_or_close, key, key_or_close, colon, next };
    constexpr int MAX_DEPTH = 64;
    char open[MAX_DEPTH];
    int depth = 0;
    size_t i = skip_space(s, 0);
    if (i >= s.size() || (s[i] != '{' && s[i] != '[')) return false;
    expect state = expect::value;
    for (;;) {
        i = skip_space(s, i);
        if (state == expect::next && depth == 0) return i == s.size();
        if (i >= s.size()) return false;
        const char c = s[i];
        switch (state) {
            case expect::value_or_close:
            case expect::value:
                if (state == expect::value_or_close && c == ']') {
                    --depth;
                    ++i;
                    state = expect::next;
                } else if (c == '{' || c == '[') {
                    if (depth == MAX_DEPTH) return false;
                    open[depth++] = c;
                    ++i;
                    state = c == '{' ? expect::key_or_close : expect::value_or_close;
                } else if (c == '"') {
                    i = skip_plain_string(s, i);
                    state = expect::next;
                } else if (s.substr(i, 4) == "true" || s.substr(i, 4) == "null") {
                    i += 4;
                    state = expect::next;
                } else if (s.substr(i, 5) == "false") {
                    i += 5;
                    state = expect::next;
                } else {
                    i = skip_plain_number(s, i);
                    state = expect::next;
                }
                break;
            case expect::key_or_close:
                if (c == '}') {
                    --depth;
                    ++i;
                    state = expect::next;
                    break;
                }
                [[fallthrough]];
            case expect::key:
                if (c != '"') return false;
                i = skip_plain_string(s, i);
                state = expect::colon;
                break;
            case expect::colon:
                if (c != ':') return false;
                ++i;
                state = expect::value;
                break;
            case expect::next:
                if (c == ',') {
                    ++i;
                    state = open[depth - 1] == '{' ? expect::key : expect::value;
                } else if (c == (open[depth - 1] == '{' ? '}' : ']')) {
                    --depth;
                    ++i;
                } else {
                    return false;
                }
                break;
        }
        if (i == NOT_PLAIN) return false;
    }
}

void frame_request(std::string_view body, std::string& out) {
    out.clear();
    out.reserve(body.size() + 1);
    size_t start = 0;
    for (;;) {
        const void* hit = std::memchr(body.data() + start, '\n', body.size() - start);
        if (hit == nullptr) break;
        size_t nl = static_cast<size_t>(static_cast<const char*>(hit) - body.data());
        out.append(body.data() + start, nl - start);
        start = nl + 1;
    }
    out.append(body.data() + start, body.size() - start);
    out.push_back('\n');
}

bool is_object_or_array(std::string_view line) {
    size_t i = skip_space(line, 0);
    if (i >= line.size() || (line[i] != '{' && line[i] != '[')) return false;
    // The usual answer is checked in one pass; anything else by the full parser.
    return is_plain_json_container(line) || nlohmann::json::accept(line.substr(i));
}

std::optional<std::string_view> find_top_level_field(std::string_view body, std::string_view name) {
    auto value = scan::find_member(body, name);
    if (value && value->size() >= 2 && value->front() == '"') {
        value = value->substr(1, value->size() - 2);
    }
    return value;
}

std::optional<long long> find_deadline_ms(std::string_view body) {
    auto text = find_top_level_field(body, "deadline");
    if (!text || text->empty() || text->size() > 18) return std::nullopt;
    long long ms = 0;
    for (char c : *text) {
        if (c < '0' || c > '9') return std::nullopt;
        ms = ms * 10 + (c - '0');
    }
    return ms;
}

bool line_buffer::append(const char* data, size_t n) {
    size_t old = data_.size();
    data_.append(data, n);
    if (newline_ == std::string::npos) {
        const void* hit = std::memchr(data_.data() + old, '\n', n);
        if (hit != nullptr)
            newline_ = static_cast<size_t>(static_cast<const char*>(hit) - data_.data());
    }
    return newline_ != std::string::npos;
}

size_t line_buffer::take_line(std::string& line) {
    size_t extra = data_.size() - (newline_ + 1);
    data_.resize(newline_ + 1);
    line.swap(data_);
    clear();
    return extra;
}

void line_buffer::take_next_line(std::string& line) {
    const size_t end = newline_ + 1;
    if (end == data_.size()) {
        line.swap(data_);  // the usual case: one line, no copy
        clear();
        return;
    }
    line.assign(data_, 0, end);
    data_.erase(0, end);
    const void* hit = std::memchr(data_.data(), '\n', data_.size());
    newline_ = hit == nullptr ? std::string::npos
                              : static_cast<size_t>(static_cast<const char*>(hit) - data_.data());
}

void line_buffer::clear() {
    data_.clear();
    newline_ = std::string::npos;
}

}  // namespace actionloop
