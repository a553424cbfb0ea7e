#include "lambda/invocation.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace actionloop::lambda {
namespace {

using nlohmann::json;

constexpr std::string_view INVOCATION_PATH = "/2018-06-01/runtime/invocation/";
constexpr std::string_view LAUNCHER_ERROR = "{\"__lambda_error\":";
constexpr std::size_t MAX_TRACE_LINES = 100;

// A JSON string literal of `text`; invalid UTF-8 becomes U+FFFD rather than an exception.
std::string quoted(std::string_view text) {
    return json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

void add_string(std::string& line, std::string_view name, std::string_view text) {
    if (text.empty()) return;
    line += ",\"";
    line += name;
    line += "\":";
    line += quoted(text);
}

std::string_view without_newline(std::string_view line) {
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    return line;
}

json trace_lines(std::string_view text) {
    json lines = json::array();
    while (!text.empty() && lines.size() < MAX_TRACE_LINES) {
        const std::size_t end = text.find('\n');
        std::string_view one = text.substr(0, end);
        if (!without_newline(one).empty()) lines.push_back(std::string(without_newline(one)));
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return lines;
}

std::string error_body(std::string_view type, std::string_view message, std::string_view trace) {
    json body = {{"errorMessage", std::string(message)},
                 {"errorType", std::string(type)},
                 {"stackTrace", trace_lines(trace)}};
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The launcher's error line ({"__lambda_error":{…}}, launcher/src/loop.cpp) as a post;
// nullopt when the line is not one (an answer that merely starts alike stays an answer).
std::optional<post> launcher_error(const invocation& inv, std::string_view line) {
    if (line.substr(0, LAUNCHER_ERROR.size()) != LAUNCHER_ERROR) return std::nullopt;
    json parsed = json::parse(line, nullptr, false);
    if (!parsed.is_object() || parsed.size() != 1) return std::nullopt;
    json& error = parsed["__lambda_error"];
    if (!error.is_object()) return std::nullopt;
    std::string type = "Runtime.Unknown";
    if (auto t = error.find("errorType"); t != error.end() && t->is_string()) {
        type = t->get<std::string>();
    }
    post p;
    p.target = std::string(INVOCATION_PATH) + inv.request_id + "/error";
    p.body = error.dump(-1, ' ', false, json::error_handler_t::replace);
    p.error_type = std::move(type);
    return p;
}

std::string with_request_id(const invocation& inv, std::string_view text) {
    return "RequestId: " + inv.request_id + " Error: " + std::string(text);
}

}  // namespace

bool usable_request_id(std::string_view id) {
    if (id.empty() || id.size() > 128) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
    });
}

std::optional<std::string> event_problem(std::string_view event, const json_limits& limits) {
    if (auto bounds = json_bounds_error(event, limits)) return "The event " + *bounds + ".";
    if (event.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::nullopt;
    // The event goes into the line as text, so it must be JSON to its last byte: nlohmann's
    // lexer ends the input at a NUL (and a view is read as a C string), which would let the
    // bytes after one through unchecked. JSON has no raw NUL anywhere.
    if (event.find('\0') != std::string_view::npos || !json::accept(event.begin(), event.end())) {
        return std::string("The event is not JSON.");
    }
    return std::nullopt;
}

std::optional<long long> deadline_of(const invocation& inv) {
    return deadline_ms_of(inv.deadline_ms);
}

std::string request_line(const invocation& inv) {
    std::string line;
    line.reserve(inv.event.size() + inv.request_id.size() + inv.function_arn.size() +
                 inv.trace_id.size() + inv.client_context.size() + inv.cognito_identity.size() +
                 160);
    line += "{\"value\":";
    const bool empty = inv.event.find_first_not_of(" \t\r\n") == std::string::npos;
    line += empty ? std::string_view("{}") : std::string_view(inv.event);
    add_string(line, "activation_id", inv.request_id);
    add_string(line, "action_name", inv.function_arn);
    if (deadline_of(inv)) add_string(line, "deadline", inv.deadline_ms);
    add_string(line, "lambda_trace_id", inv.trace_id);
    add_string(line, "lambda_client_context", inv.client_context);
    add_string(line, "lambda_cognito_identity", inv.cognito_identity);
    line += '}';
    return line;
}

post error_post(const invocation& inv, std::string_view type, std::string_view message,
                std::string_view trace) {
    post p;
    p.target = std::string(INVOCATION_PATH) + inv.request_id + "/error";
    p.body = error_body(type, message, trace);
    p.error_type = std::string(type);
    return p;
}

post result_post(const invocation& inv, const activation_result& result,
                 std::size_t max_answer_bytes) {
    if (result.no_action) {
        return error_post(inv, "Runtime.Unknown", with_request_id(inv, "no action was started"));
    }
    if (!result.start_failure.empty()) {
        return error_post(
            inv, "Runtime.ExitError",
            with_request_id(inv, "cannot start the action again: " + result.start_failure));
    }
    switch (result.outcome) {
        case executor::outcome::answered: {
            const std::string_view line = without_newline(result.line);
            if (auto error = launcher_error(inv, line)) return std::move(*error);
            post p;
            p.target = std::string(INVOCATION_PATH) + inv.request_id + "/response";
            p.body = std::string(line);
            return p;
        }
        case executor::outcome::exited:
            return error_post(
                inv, "Runtime.ExitError",
                with_request_id(inv, result.crash.empty()
                                         ? "Runtime exited during the invocation"
                                         : "Runtime exited with error: " + result.crash),
                result.stderr_tail);
        case executor::outcome::deadline:
            return error_post(inv, "Sandbox.Timedout",
                              with_request_id(inv, "Task timed out: the invocation's deadline "
                                                   "passed and the action was stopped"),
                              result.stderr_tail);
        case executor::outcome::too_large:
            return error_post(inv, "Function.ResponseSizeTooLarge",
                              with_request_id(inv, "Response payload size exceeded the maximum "
                                                   "allowed payload size (" +
                                                       std::to_string(max_answer_bytes) +
                                                       " bytes, OW_MAX_ANSWER_BYTES)."));
    }
    return error_post(inv, "Runtime.Unknown", with_request_id(inv, "unknown outcome"));
}

post init_error_post(std::string_view message, std::string_view stderr_tail) {
    post p;
    p.target = std::string(INIT_ERROR_PATH);
    p.body = error_body("Runtime.InitError", message, stderr_tail);
    p.error_type = "Runtime.InitError";
    return p;
}

}  // namespace actionloop::lambda
