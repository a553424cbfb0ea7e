#include "protocol/error_answer.hpp"

#include <nlohmann/json.hpp>

namespace actionloop {

std::string error_body(std::string_view message) {
    std::string body = nlohmann::json{{"error", message}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    body.push_back('\n');
    return body;
}

activation_outcome outcome_of_status(int status) {
    switch (status) {
        case OK:
            return activation_outcome::success;
        case BAD_GATEWAY:
            return activation_outcome::action_error;
        case SERVICE_UNAVAILABLE:
            return activation_outcome::shutting_down;
        default:
            return activation_outcome::rejected;
    }
}

answer error_answer(int status, std::string_view message) {
    answer a;
    a.status = status;
    a.body = error_body(message);
    a.outcome = outcome_of_status(status);
    return a;
}

answer too_large_answer(size_t limit) {
    return error_answer(PAYLOAD_TOO_LARGE, "The request body exceeds the limit of " +
                                               std::to_string(limit) +
                                               " bytes (OW_MAX_BODY_BYTES).");
}

answer malformed_request_answer() { return error_answer(BAD_REQUEST, "HTTP error 400"); }

std::string queue_full_text(size_t limit) {
    return "The runtime is busy: OW_MAX_QUEUED (" + std::to_string(limit) +
           ") requests are waiting for the action; try again later.";
}

answer too_many_connections_answer(size_t limit) {
    answer a = error_answer(SERVICE_UNAVAILABLE, "The runtime is busy: OW_MAX_CONNECTIONS (" +
                                                     std::to_string(limit) +
                                                     ") connections are open; try again later.");
    a.headers.emplace_back("Retry-After", RETRY_AFTER_SECONDS);
    a.last = true;
    return a;
}

namespace {

std::string inflight_busy_text(size_t limit) {
    return "The runtime is busy: OW_MAX_INFLIGHT (" + std::to_string(limit) +
           ") activations are running or waiting for the action; ";
}

}  // namespace

answer inflight_full_answer(size_t limit) {
    answer a = error_answer(TOO_MANY_REQUESTS, inflight_busy_text(limit) + "try again later.");
    a.headers.emplace_back("Retry-After", RETRY_AFTER_SECONDS);
    return a;
}

answer saturated_health_answer(size_t limit) {
    return error_answer(SERVICE_UNAVAILABLE,
                        inflight_busy_text(limit) + "not ready until one is answered.");
}

}  // namespace actionloop
