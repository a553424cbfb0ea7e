// The error type of the proxy: every failure it reports is an http_error carrying its
// status; answers.cpp is the one place that renders it, as {"error":"…"}\n with
// application/json.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace actionloop {

/// Statuses, as upstream uses them.
enum status : int {
    OK = 200,
    BAD_REQUEST = 400,          // unreadable request or /init body, the action died during a run
    FORBIDDEN = 403,            // second init, init without code
    PAYLOAD_TOO_LARGE = 413,    // request body over the limit (ours)
    INTERNAL_ERROR = 500,       // no action defined yet; an unexpected internal failure
    BAD_GATEWAY = 502,          // extract/compile/start failure, bad answer, deadline, answer cap
    SERVICE_UNAVAILABLE = 503,  // shutting down: /init and /run refused, /health (ours)
};

class http_error : public std::runtime_error {
public:
    http_error(int status, const std::string& message)
        : std::runtime_error(message), status_(status) {}
    int status() const { return status_; }

private:
    int status_;
};

/// {"error":"<message>"} plus a newline, byte-compatible with upstream's sendError.
inline std::string error_body(const std::string& message) {
    std::string body = nlohmann::json{{"error", message}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    body.push_back('\n');
    return body;
}

}  // namespace actionloop
