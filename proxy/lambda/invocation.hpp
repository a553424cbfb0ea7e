// lambda/: Lambda mode (docs/LAMBDA.md), where the proxy is the client of the AWS Lambda
// Runtime API instead of an HTTP server. This header is the pure half: an invocation as
// `GET /next` gave it, the request line the action reads for it, and what to post back for
// the activation's result (a response, or an error in Lambda's shape). No I/O:
// runtime_connection.hpp talks HTTP, poller.hpp runs the loop of one worker, lambda_mode.hpp
// wires them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/engine.hpp"
#include "engine/framing.hpp"

namespace actionloop::lambda {

/// The Runtime API's paths.
inline constexpr std::string_view NEXT_PATH = "/2018-06-01/runtime/invocation/next";
inline constexpr std::string_view INIT_ERROR_PATH = "/2018-06-01/runtime/init/error";

/// One invocation, as `GET …/invocation/next` gave it (each field "" when its header was
/// absent).
struct invocation {
    std::string request_id;        // Lambda-Runtime-Aws-Request-Id
    std::string deadline_ms;       // Lambda-Runtime-Deadline-Ms: epoch milliseconds
    std::string function_arn;      // Lambda-Runtime-Invoked-Function-Arn
    std::string trace_id;          // Lambda-Runtime-Trace-Id (X-Ray)
    std::string client_context;    // Lambda-Runtime-Client-Context (JSON text)
    std::string cognito_identity;  // Lambda-Runtime-Cognito-Identity (JSON text)
    std::string invocation_id;     // Lambda-Runtime-Invocation-Id (sent back on the post)
    std::string event;             // the body: the event, any JSON
};

/// Whether `id` may be put into a path: 1 to 128 of [A-Za-z0-9._-] (a UUID in practice).
bool usable_request_id(std::string_view id);

/// Why the invocation's event cannot go to the action (not JSON, or past the JSON bounds),
/// in words for its error; nullopt when it can. One pass, no DOM.
std::optional<std::string> event_problem(std::string_view event, const json_limits& limits);

/// The deadline, epoch milliseconds, when the header holds a usable one (1 to 18 digits).
std::optional<long long> deadline_of(const invocation& inv);

/// The request line the action reads (docs/LAMBDA.md, "What the action gets"): the event as
/// `value` ({} when the body is empty), the request id as `activation_id`, the ARN as
/// `action_name`, the deadline, and the trace, client context and identity when sent.
std::string request_line(const invocation& inv);

/// What to post to the Runtime API about one invocation.
struct post {
    std::string target;      // ".../invocation/<id>/response", ".../error", or init/error
    std::string body;        // JSON
    std::string error_type;  // Lambda-Runtime-Function-Error-Type ("": a response)
};

/// The error post of `inv`: {"errorMessage", "errorType", "stackTrace"} to …/<id>/error.
/// `trace` is text whose lines become stackTrace (at most 100 of them).
post error_post(const invocation& inv, std::string_view type, std::string_view message,
                std::string_view trace = {});

/// The post for the activation's result: the action's line as the response; the launcher's
/// {"__lambda_error":{…}} as an error with its errorType; a crash as Runtime.ExitError (its
/// stderr tail as the stack trace), a missed deadline as Sandbox.Timedout, an answer past
/// OW_MAX_ANSWER_BYTES as Function.ResponseSizeTooLarge, a process that cannot be started
/// again as Runtime.ExitError.
post result_post(const invocation& inv, const activation_result& result,
                 std::size_t max_answer_bytes);

/// `POST …/runtime/init/error`: the action could not be started (`message`, with the stderr
/// lines of its start as the stack trace).
post init_error_post(std::string_view message, std::string_view stderr_tail);

}  // namespace actionloop::lambda
