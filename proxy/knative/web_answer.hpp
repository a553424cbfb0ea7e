// Single-entrypoint mode, answer side: the action's result (or a refusal) as a real HTTP
// response, by the web-action rules: statusCode, headers and body of the result, the
// Content-Type default and charset, base64 images, 204 for an empty page, CORS.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace actionloop::knative {

struct response {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;  // Content-Type among them
    std::string body;
    bool bodyless = false;  // 204/304: no body, no Content-Type, no Content-Length
};

/// The action's answer line (a JSON object or array) as the HTTP response.
/// `request_headers` is the request's Access-Control-Request-Headers ("" when absent).
response web_response(const std::string& answer, const std::string& request_headers);

/// {"error":"<message>"} with application/json.
response error_response(int status, const std::string& message);

/// A classic /init or /run answer that is not a result (an error): its status and body.
response classic_response(int status, const std::string& body);

/// Node's lenient base64: both alphabets, padding and any other character skipped.
std::string decode_base64_lenient(const std::string& text);

/// The Content-Type sent for a non-image payload: the media type lower-cased, parameter
/// names lower-cased and sorted, charset=utf-8 (replacing any charset).
std::string with_utf8_charset(const std::string& content_type);

}  // namespace actionloop::knative
