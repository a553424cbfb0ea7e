// Exact-reply checks shared by the integration suites.
#pragma once

#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "http_client.hpp"

namespace support {

/// The proxy's success body for /init.
inline const std::string OK_BODY = "{\"ok\":true}\n";

/// Upstream's error texts, which clients match (docs/protocol.md).
inline const std::string MISSING_CODE = "Missing main/no code to execute.";
inline const std::string NOT_OBJECT = "The action did not return a dictionary or array.";

/// The proxy's error body: compact {"error":"<message>"} plus a newline.
inline std::string error_body(const std::string& message) {
    return nlohmann::json{{"error", message}}.dump() + "\n";
}

/// `text` cut to `limit` bytes (with a note of the full size) for failure messages.
inline std::string shorten(const std::string& text, std::size_t limit = 400) {
    if (text.size() <= limit) {
        return text;
    }
    return text.substr(0, limit) + "... (" + std::to_string(text.size()) + " bytes)";
}

/// The reply body parsed as JSON (discarded value when it does not parse).
inline nlohmann::json json_of(const http_reply& reply) {
    return nlohmann::json::parse(reply.body, nullptr, false);
}

}  // namespace support

/// Exact status and body (the last argument), a JSON content type, and a Content-Length that
/// matches the body.
#define CHECK_REPLY(reply_expr, status_code, ...)                                       \
    do {                                                                                \
        const ::support::http_reply& reply_ = (reply_expr);                             \
        CHECK_MESSAGE(reply_.status == (status_code), "transport: " << reply_.error);   \
        const std::string want_ = (__VA_ARGS__);                                        \
        const bool same_body_ = reply_.body == want_;                                   \
        CHECK_MESSAGE(same_body_, "body: " << ::support::shorten(reply_.body)           \
                                           << "\nwant: " << ::support::shorten(want_)); \
        CHECK(reply_.header("content-type") == "application/json");                     \
        CHECK(reply_.header("content-length") == std::to_string(reply_.body.size()));   \
    } while (false)

/// CHECK_REPLY with the error body for `message`.
#define CHECK_ERROR_REPLY(reply_expr, status_code, ...) \
    CHECK_REPLY(reply_expr, status_code, ::support::error_body(__VA_ARGS__))
