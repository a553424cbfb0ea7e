// The answer side of single-entrypoint mode: result → HTTP response.
#include "protocol/knative/web_answer.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <boost/beast/core/string.hpp>
#include <nlohmann/json.hpp>

#include "protocol/base64.hpp"
#include "protocol/error_answer.hpp"
#include "protocol/knative/ordered_parse.hpp"
#include "protocol/knative/text.hpp"
#include "protocol/run_step.hpp"

namespace actionloop::knative {
namespace {

using boost::beast::iequals;

constexpr const char* ALLOW_METHODS = "OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH";
constexpr const char* ALLOW_HEADERS =
    "Authorization, Origin, X-Requested-With, Content-Type, Accept, User-Agent";

std::string compact(const ordered_json& value) {
    return value.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

// A header value of the action as text: strings as they are, anything else as JSON text.
std::string header_text(const ordered_json& value) {
    return value.is_string() ? value.get<std::string>() : compact(value);
}

// A name and value that can go on a header line as they are (no line breaks, no control
// characters in the name, no colon): anything else is dropped, so an answer cannot forge
// headers or a second response.
bool sendable(const std::string& name, const std::string& value) {
    if (name.empty() || value.find_first_of("\r\n") != std::string::npos) return false;
    return std::none_of(name.begin(), name.end(), [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || c == ':' || c == 0x7f;
    });
}

bool has_header(const answer& r, const char* name) {
    return std::any_of(r.headers.begin(), r.headers.end(),
                       [&](const auto& h) { return iequals(h.first, name); });
}

// The action's headers, each as given (an array: one line per element); Content-Type
// apart, returned through `content_type`.
void add_action_headers(answer& r, const ordered_json& result, std::string& content_type) {
    auto headers = result.find("headers");
    if (headers == result.end() || !headers->is_object()) return;
    for (const auto& [name, value] : headers->items()) {
        if (value.is_null()) continue;
        if (iequals(name, "Content-Type")) {
            const std::string text =
                header_text(value.is_array() && !value.empty() ? value[0] : value);
            if (sendable(name, text)) content_type = text;
            continue;
        }
        const ordered_json values = value.is_array() ? value : ordered_json::array({value});
        for (const auto& element : values) {
            const std::string text = header_text(element);
            if (sendable(name, text)) r.headers.emplace_back(name, text);
        }
    }
}

int status_of(const ordered_json& result) {
    auto code = result.find("statusCode");
    if (code == result.end() || !code->is_number_integer()) return 200;
    const auto value = code->get<long long>();
    return value >= 200 && value <= 599 ? static_cast<int>(value) : 200;
}

// R.body when present (null → ""), else R without statusCode and headers.
ordered_json payload_of(ordered_json result) {
    auto body = result.find("body");
    if (body != result.end()) return body->is_null() ? ordered_json("") : std::move(*body);
    result.erase("statusCode");
    result.erase("headers");
    return result;
}

void add_cors(answer& r, const std::string& request_headers) {
    if (!has_header(r, "Access-Control-Allow-Origin")) {
        r.headers.emplace_back("Access-Control-Allow-Origin", "*");
    }
    if (!has_header(r, "Access-Control-Allow-Methods")) {
        r.headers.emplace_back("Access-Control-Allow-Methods", ALLOW_METHODS);
    }
    if (!has_header(r, "Access-Control-Allow-Headers")) {
        r.headers.emplace_back("Access-Control-Allow-Headers",
                               request_headers.empty() ? ALLOW_HEADERS : request_headers);
    }
}

}  // namespace

answer web_response(const std::string& line, const std::string& request_headers,
                    const json_limits& limits) {
    if (auto excess = json_bounds_error(line, limits)) {
        return error_response(BAD_GATEWAY, "The action's answer " + *excess + ".");
    }
    // The one parse of the answer (run_step left the check to us: answer_check::by_caller).
    ordered_json payload = parse_ordered(line);
    if (payload.is_discarded() || !payload.is_structured()) {
        return classic_response(not_object_answer());
    }
    answer r;
    r.json = false;
    std::string content_type;
    if (payload.is_object()) {
        r.status = status_of(payload);
        add_action_headers(r, payload, content_type);
        payload = payload_of(std::move(payload));
    }
    const bool text = payload.is_string();
    const bool image = text && lower(trim(content_type)).rfind("image", 0) == 0;
    if (content_type.empty()) content_type = text ? "text/html" : "application/json";
    if (image) {
        r.body = decode_base64_lenient(payload.get<std::string>());
        r.headers.emplace_back("Content-Type", content_type);
        r.headers.emplace_back("Content-Transfer-Encoding", "binary");
    } else {
        r.body = text ? payload.get<std::string>() : compact(payload);
        if (r.status == 200 && text && r.body.empty()) r.status = 204;
        r.headers.emplace_back("Content-Type", with_utf8_charset(content_type));
    }
    add_cors(r, request_headers);
    if (r.status == 204 || r.status == 304) {
        r.bodyless = true;
        r.body.clear();
        r.headers.erase(std::remove_if(r.headers.begin(), r.headers.end(),
                                       [](const auto& h) {
                                           return iequals(h.first, "Content-Type") ||
                                                  iequals(h.first, "Content-Length");
                                       }),
                        r.headers.end());
    }
    return r;
}

answer error_response(int status, const std::string& message) {
    return classic_response(error_answer(status, message));
}

answer classic_response(answer classic) {
    if (!classic.body.empty() && classic.body.back() == '\n') classic.body.pop_back();
    return classic;
}

std::string with_utf8_charset(const std::string& content_type) {
    std::string type = lower(trim(content_type.substr(0, content_type.find(';'))));
    std::map<std::string, std::string> parameters;
    size_t at = content_type.find(';');
    while (at != std::string::npos) {
        const size_t next = content_type.find(';', at + 1);
        const std::string part = trim(content_type.substr(at + 1, next - at - 1));
        at = next;
        const size_t eq = part.find('=');
        if (part.empty() || eq == std::string::npos) continue;
        parameters[lower(trim(part.substr(0, eq)))] = trim(part.substr(eq + 1));
    }
    parameters["charset"] = "utf-8";
    for (const auto& [name, value] : parameters)
        type.append("; ").append(name).append("=").append(value);
    return type;
}

}  // namespace actionloop::knative
