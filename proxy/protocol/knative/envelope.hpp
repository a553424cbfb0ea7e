// Single-entrypoint mode, request side: one HTTP request to / (its JSON envelope of `init`,
// `activation` and `value`) translated into the bodies of the classic /init and /run.
// Pure functions; every refusal is a refusal (protocol/error_answer.hpp) with the status and text
// of the mode.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/framing.hpp"
#include "protocol/knative/ordered_parse.hpp"

namespace actionloop::knative {

/// The request as the session read it, owned (it goes to a worker).
struct web_request {
    std::string method;                                        // as sent, e.g. "POST"
    std::string target;                                        // path and query
    std::vector<std::pair<std::string, std::string>> headers;  // as received, in order
    std::string body;
};

inline constexpr const char* BAD_REQUEST_TEXT = "Bad request.";
inline constexpr const char* INTERNAL_TEXT = "internal error during request processing.";
inline constexpr const char* DEDICATED_TEXT =
    "Cannot initialize a runtime with a dedicated function.";
inline constexpr const char* NOT_INITIALIZED_TEXT = "System not initialized.";
inline constexpr const char* NO_CODE_TEXT = "Missing main/no code to execute.";
inline constexpr const char* REINIT_TEXT = "Cannot initialize the action more than once.";

/// The value of the first header named `name` (case-insensitive), "" when absent.
std::string header_value(const web_request& req, const std::string& name);

/// The path of the target, without its query.
std::string path_of(const std::string& target);

/// The envelope: the body as JSON when the Content-Type is application/json (else, or when
/// empty or an array, {}), members in the order received (__ow_body), read in linear time.
/// Throws refusal 413 "The request's JSON nests deeper than N levels (OW_MAX_JSON_DEPTH)." or
/// "… has more than N members (OW_MAX_JSON_MEMBERS)." when the body is over `limits`, checked
/// before it is parsed; refusal 500 "Bad request." on invalid JSON or a scalar.
ordered_json parse_envelope(const web_request& req, const json_limits& limits = {});

/// What an `init` member asks for, as a classic /init body plus what the mode keeps.
struct init_fields {
    std::string init_body;  // {"value":{"code","main","binary","env"?}}
    bool raw = false;
    std::string name;
};

/// Throws refusal 500 (binary/raw not a boolean, null, 0 or "") or 403 (no code).
init_fields translate_init(const ordered_json& init);

/// The classic /run body of a run: {"value": <arguments>, <context strings>...}, built in
/// time linear in the envelope's size.
/// `raw` and `action_name` belong to the action; `user` is the raw __ow_user. Throws
/// refusal 403 when `value` is a string, number or boolean.
std::string translate_run(const ordered_json& envelope, const web_request& req, bool raw,
                          const std::string& action_name, const std::string& user);

/// __ow_query: the query string as an object (repeated names → arrays of values).
ordered_json query_object(const std::string& target);

/// __ow_headers: names lower-cased, repeated values joined with ", ".
ordered_json headers_object(const web_request& req);

}  // namespace actionloop::knative
