// Single-entrypoint mode, answer side: the action's result (or a refusal) as a real HTTP
// response, by the web-action rules: statusCode, headers and body of the result, the
// Content-Type default and charset, base64 images, 204 for an empty page, CORS.
#pragma once

#include <string>

#include "engine/framing.hpp"
#include "protocol/exchange.hpp"

namespace actionloop::knative {

/// The action's answer line (a JSON object or array) as the HTTP answer: Content-Type among
/// the headers (answer.json false), bodyless for 204/304.
/// `request_headers` is the request's Access-Control-Request-Headers ("" when absent).
/// A line over `limits` (checked before it is parsed, which takes linear time) is answered
/// 502 "The action's answer nests deeper than N levels (OW_MAX_JSON_DEPTH)." (or "has more
/// than N members (OW_MAX_JSON_MEMBERS)."), as a line that is not an object or array is.
answer web_response(const std::string& line, const std::string& request_headers,
                    const json_limits& limits = {});

/// {"error":"<message>"} with application/json, without the classic answer's newline; its
/// outcome is error_answer()'s.
answer error_response(int status, const std::string& message);

/// A classic /init or /run answer that is not a result (an error): its status, body without
/// the trailing newline, and outcome.
answer classic_response(answer classic);

/// The Content-Type sent for a non-image payload: the media type lower-cased, parameter
/// names lower-cased and sorted, charset=utf-8 (replacing any charset).
std::string with_utf8_charset(const std::string& content_type);

}  // namespace actionloop::knative
