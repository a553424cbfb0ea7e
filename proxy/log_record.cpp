// OW_LOG_FORMAT=json records, and Lambda's: see log_record.hpp.
#include "log_record.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <utility>

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

// `text` is `lower` in any case (ASCII).
bool same_word(std::string_view text, std::string_view lower) {
    return text.size() == lower.size() &&
           std::equal(text.begin(), text.end(), lower.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == b;
           });
}

// ,"message":… then ,"truncated":N when cut, then "}\n": the end of both records. A message
// that is exactly one JSON object goes in as that object; any other as a string, cut to
// `max` bytes at a UTF-8 boundary (`lost`: bytes already cut before).
void append_message(std::string& out, std::string_view message, size_t max, size_t lost) {
    if (!message.empty() && message.back() == '\r') message.remove_suffix(1);
    const size_t kept = utf8_cut(message, max);
    if (kept == message.size() && lost == 0 && is_one_object(message)) {
        out += ",\"message\":";
        out.append(message.data() + scan::skip_space(message, 0), message.data() + message.size());
        while (!out.empty() && scan::is_space(out.back())) out.pop_back();
    } else {
        append_member(out, "message", message.substr(0, kept));
    }
    if (kept < message.size() || lost > 0) {
        out += ",\"truncated\":";
        out += std::to_string(message.size() - kept + lost);
    }
    out += "}\n";
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
    append_message(out, message, max_message_bytes, lost_bytes);
}

// --- Lambda's JSON logs ---

std::string_view level_name(log_level level) {
    switch (level) {
        case log_level::trace:
            return "TRACE";
        case log_level::debug:
            return "DEBUG";
        case log_level::info:
            return "INFO";
        case log_level::warn:
            return "WARN";
        case log_level::error:
            return "ERROR";
        case log_level::fatal:
            return "FATAL";
    }
    return "INFO";
}

std::optional<log_level> level_named(std::string_view name) {
    static const std::pair<std::string_view, log_level> NAMES[] = {
        {"trace", log_level::trace}, {"debug", log_level::debug},   {"info", log_level::info},
        {"warn", log_level::warn},   {"warning", log_level::warn},  {"error", log_level::error},
        {"fatal", log_level::fatal}, {"critical", log_level::fatal}};
    for (const auto& [known, level] : NAMES) {
        if (same_word(name, known)) return level;
    }
    return std::nullopt;
}

log_format lambda_log_format(std::string_view format, std::string_view level) {
    log_format result;
    result.lambda = true;
    result.json = same_word(format, "json");
    if (!result.json || level.empty()) return result;
    if (const auto named = level_named(level)) {
        result.min_level = *named;
    } else {
        result.unknown_level = std::string(level);
    }
    return result;
}

std::optional<log_level> level_of_line(std::string_view line) {
    const auto value = scan::find_member(line, "level");
    if (!value || value->size() < 2 || value->front() != '"') return std::nullopt;
    const auto level = level_named(value->substr(1, value->size() - 2));
    if (!level || !is_one_object(line)) return std::nullopt;  // checked last: the dear part
    return level;
}

bool append_lambda_record(std::string& out, std::string_view time, log_level level,
                          log_level min_level, const activation_tags* tags,
                          std::string_view message, size_t max_message_bytes, size_t lost_bytes) {
    if (!message.empty() && message.back() == '\r') message.remove_suffix(1);
    // Only a line kept whole is an object (a cut one is text): only it can name its level.
    if (lost_bytes == 0 && message.size() <= max_message_bytes) {
        level = level_of_line(message).value_or(level);
    }
    if (level < min_level) return false;
    out += "{\"timestamp\":\"";
    out += time;
    out.push_back('"');
    append_member(out, "level", level_name(level));
    if (tags != nullptr && !tags->activation_id.empty()) {
        append_member(out, "requestId", tags->activation_id);
    }
    append_message(out, message, max_message_bytes, lost_bytes);
    return true;
}

}  // namespace actionloop
