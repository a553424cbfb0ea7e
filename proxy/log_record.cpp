// OW_LOG_FORMAT=json records: see log_record.hpp.
#include "log_record.hpp"

#include <ctime>

#include <actionloop/detail/json_scan.hpp>

namespace actionloop {
namespace {

// A JSON string's contents, escaped (the text is taken as UTF-8: bytes ≥ 0x80 pass through).
void append_escaped(std::string& out, std::string_view text) {
    static const char HEX[] = "0123456789abcdef";
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    out += "\\u00";
                    out.push_back(HEX[c >> 4]);
                    out.push_back(HEX[c & 15]);
                } else {
                    out.push_back(ch);
                }
        }
    }
}

void append_member(std::string& out, std::string_view name, std::string_view value) {
    out += ",\"";
    out += name;
    out += "\":\"";
    append_escaped(out, value);
    out.push_back('"');
}

// The value of a top-level string member (quotes removed, escapes kept as they are: ids and
// names have none in practice, and an escaped one stays valid inside our record).
std::string string_member(std::string_view line, std::string_view name) {
    auto value = scan::find_member(line, name);
    if (!value || value->size() < 2 || value->front() != '"') return {};
    return std::string(value->substr(1, value->size() - 2));
}

// True when `text` is exactly one JSON object (strict; anything else is sent as a string).
bool is_one_object(std::string_view text) {
    const size_t i = scan::skip_space(text, 0);
    if (i >= text.size() || text[i] != '{') return false;
    std::deque<std::string> arena;
    scan::reader r(text, {512, false, &arena, {}});
    try {
        r.skip();
        return r.at_end();
    } catch (const scan::syntax_error&) {
        return false;
    }
}

// The longest prefix of at most `max` bytes that does not end inside a UTF-8 sequence.
size_t utf8_cut(std::string_view text, size_t max) {
    if (text.size() <= max) return text.size();
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return cut;
}

}  // namespace

activation_tags tags_of_request(std::string_view request_line) {
    return {string_member(request_line, "activation_id"),
            string_member(request_line, "transaction_id"),
            string_member(request_line, "action_name")};
}

std::string log_time(std::chrono::system_clock::time_point when) {
    using namespace std::chrono;
    const auto ms = duration_cast<milliseconds>(when.time_since_epoch()).count();
    const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char text[32];
    const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    char millis[8];
    std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(ms % 1000));
    return std::string(text, n) + millis;
}

void append_log_record(std::string& out, std::string_view time, std::string_view stream,
                       const activation_tags* tags, std::string_view message,
                       size_t max_message_bytes, size_t lost_bytes, std::string_view extra) {
    if (!message.empty() && message.back() == '\r') message.remove_suffix(1);
    out += "{\"time\":\"";
    out += time;
    out.push_back('"');
    append_member(out, "stream", stream);
    if (tags != nullptr) {
        if (!tags->activation_id.empty()) append_member(out, "activationId", tags->activation_id);
        if (!tags->transaction_id.empty()) {
            append_member(out, "transactionId", tags->transaction_id);
        }
        if (!tags->action.empty()) append_member(out, "action", tags->action);
    }
    out += extra;
    const size_t kept = utf8_cut(message, max_message_bytes);
    if (kept == message.size() && lost_bytes == 0 && is_one_object(message)) {
        out += ",\"message\":";
        out.append(message.data() + scan::skip_space(message, 0), message.data() + message.size());
        while (!out.empty() && scan::is_space(out.back())) out.pop_back();
    } else {
        append_member(out, "message", message.substr(0, kept));
    }
    if (kept < message.size() || lost_bytes > 0) {
        out += ",\"truncated\":";
        out += std::to_string(message.size() - kept + lost_bytes);
    }
    out += "}\n";
}

}  // namespace actionloop
