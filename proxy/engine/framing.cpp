// Request framing, answer validation and the fd-3 line buffer.
#include "engine/framing.hpp"

#include <cstring>

#include <actionloop/detail/json_scan.hpp>
#include <nlohmann/json.hpp>

namespace actionloop {
using scan::skip_space;

bool is_plain_json_container(std::string_view s) {
    const size_t i = skip_space(s, 0);
    if (i >= s.size() || (s[i] != '{' && s[i] != '[')) return false;
    // The reader's plain subset, 64 levels at most; whatever it refuses, the full parser decides.
    scan::reader plain(s, {63, true, nullptr, {}});
    try {
        plain.skip();
        return plain.at_end();
    } catch (const scan::syntax_error&) {
        return false;
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

std::optional<std::string> json_bounds_error(std::string_view text, const json_limits& limits) {
    const scan::bounds limit{limits.max_depth, limits.max_members};
    const scan::excess found = scan::check_bounds(text, limit);
    if (found == scan::excess::none) return std::nullopt;
    return scan::excess_text(found, limit);
}

std::optional<std::string_view> find_top_level_field(std::string_view body, std::string_view name) {
    auto value = scan::find_member(body, name);
    if (value && value->size() >= 2 && value->front() == '"') {
        value = value->substr(1, value->size() - 2);
    }
    return value;
}

std::optional<long long> find_deadline_ms(std::string_view body) {
    const auto text = find_top_level_field(body, "deadline");
    return text ? deadline_ms_of(*text) : std::nullopt;
}

std::optional<long long> deadline_ms_of(std::string_view text) {
    if (text.empty() || text.size() > 18) return std::nullopt;
    long long ms = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        ms = ms * 10 + (c - '0');
    }
    return ms;
}

bool append_string_member(std::string& body, std::string_view name, std::string_view text) {
    const size_t first = skip_space(body, 0);
    const size_t last = body.find_last_not_of(" \t\r\n");
    if (first >= body.size() || last == std::string::npos || last <= first || body[first] != '{' ||
        body[last] != '}') {
        return false;
    }
    // `{ }` takes the member alone; any other object after a comma.
    const size_t before = body.find_last_not_of(" \t\r\n", last - 1);
    std::string member = before == first ? "\"" : ",\"";
    member.append(name).append("\":\"").append(text).push_back('"');
    body.insert(last, member);
    return true;
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
