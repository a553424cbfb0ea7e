// The statuses of the protocol and the one renderer of every error answer: {"error":"…"}
// plus a newline, with application/json, byte-compatible with upstream's sendError. Every
// failure the proxy reports on /init, /run, /health, a request it cannot read, and in
// single-entrypoint mode, goes out through error_answer().
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "protocol/exchange.hpp"

namespace actionloop {

/// Statuses, as upstream uses them.
enum status : int {
    OK = 200,
    BAD_REQUEST = 400,          // unreadable request or /init body, the action died during a run
    FORBIDDEN = 403,            // second init, init without code
    PAYLOAD_TOO_LARGE = 413,    // request body over the limit (ours)
    TOO_MANY_REQUESTS = 429,    // past OW_MAX_INFLIGHT activations (ours)
    INTERNAL_ERROR = 500,       // no action defined yet; an unexpected internal failure
    BAD_GATEWAY = 502,          // extract/compile/start failure, bad answer, deadline, answer cap
    SERVICE_UNAVAILABLE = 503,  // shutting down: /init and /run refused, /health (ours)
};

/// A request refused by a pure decoding step (the /init body, a single-entrypoint envelope):
/// its status and text, caught by the step that called it and rendered by error_answer().
class refusal : public std::runtime_error {
public:
    refusal(int status, const std::string& message)
        : std::runtime_error(message), status_(status) {}
    int status() const { return status_; }

private:
    int status_;
};

/// {"error":"<message>"} plus a newline (invalid UTF-8 replaced).
std::string error_body(std::string_view message);

/// The outcome an error answer with `status` carries (ops/outcome.hpp): 502 an action error,
/// 503 a refusal during the drain, 200 a success, any other a rejection. A crash (/run's 400)
/// is said where it is known (run_step), not guessed from its status.
activation_outcome outcome_of_status(int status);

/// The error answer: `status`, error_body(message), application/json, outcome_of_status().
answer error_answer(int status, std::string_view message);

/// A request body over OW_MAX_BODY_BYTES: 413, naming the setting.
answer too_large_answer(size_t limit);

/// A request that is not HTTP: 400, as Go's server says it.
answer malformed_request_answer();

/// Seconds a client is told to wait (Retry-After) when a bound below refuses it.
inline constexpr const char* RETRY_AFTER_SECONDS = "1";

/// "…OW_MAX_QUEUED (N) requests are waiting for the action; try again later." (single-
/// entrypoint mode renders it as its own error body, with 503 and Retry-After).
std::string queue_full_text(size_t limit);

/// Past OW_MAX_CONNECTIONS open connections: 503, Retry-After, and the connection closes.
answer too_many_connections_answer(size_t limit);

/// An activation past OW_MAX_INFLIGHT (`limit`) admitted ones: 429, Retry-After, "The runtime
/// is busy: OW_MAX_INFLIGHT (N) activations are running or waiting for the action; try again
/// later." The connection stays open.
answer inflight_full_answer(size_t limit);

/// /health in single-entrypoint mode while OW_MAX_INFLIGHT activations are admitted: 503, so
/// that a readiness probe takes the pod out of rotation until one is answered.
answer saturated_health_answer(size_t limit);

}  // namespace actionloop
