// Every answer the local Runtime API makes, in Lambda's shapes; the one place that knows
// their statuses, headers and bodies. An error is {"errorMessage":"…","errorType":"…"} plus
// a newline, as the Runtime Interface Emulator renders its errors; the errorType is the one
// Lambda or the emulator gives (a client matching it works unchanged), the message says what
// happened here and which flag bounds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lambda_api/requests.hpp"
#include "protocol/exchange.hpp"

namespace actionloop::lambda_api {

/// {"errorMessage":"<message>","errorType":"<type>"} plus a newline (invalid UTF-8 replaced).
std::string error_json(std::string_view type, std::string_view message);

/// `status` with error_json(type, message).
answer lambda_error(int status, std::string_view type, std::string_view message);

/// A runtime's post taken: 202 {"status":"OK"}.
answer accepted_answer();

/// What GET …/invocation/next gets besides the invoke's own fields.
struct delivery {
    std::string_view request_id;     // Lambda-Runtime-Aws-Request-Id
    std::int64_t deadline_ms = 0;    // Lambda-Runtime-Deadline-Ms (Unix epoch milliseconds)
    std::string_view function_arn;   // Lambda-Runtime-Invoked-Function-Arn
    std::string_view invocation_id;  // Lambda-Runtime-Invocation-Id ("": not sent)
};

/// The event for a parked /next: 200, the invoke's body, and Lambda's headers; those of the
/// invoke's optional fields only when it had them (invoke.trace_id is always set by then).
answer next_answer(invoke_request invoke, const delivery& d);

/// Any other path: 404. A known path with another method: 405, naming the one it takes.
answer not_found_answer(std::string_view target);
answer wrong_method_answer(std::string_view method, std::string_view target,
                           std::string_view allowed);

/// GET …/invocation/next refused: 500 Runtime.TooManyIdleRuntimes (the emulator's invoke
/// router refuses the same way, rendered as a 500). `bound` names the flag and its value.
answer too_many_next_answer(size_t parked, std::string_view bound);

/// A post for an id never handed out, or forgotten: 400 InvalidRequestID.
answer unknown_id_answer(std::string_view id);
/// A second post for an answered invocation: 400 InvalidRequestID.
answer answered_id_answer(std::string_view id);
/// A post echoing another invocation's Lambda-Runtime-Invocation-Id: 400 InvalidRequestID.
answer wrong_echo_answer(std::string_view id, std::string_view echoed, std::string_view given);
/// A post at or after the invocation's deadline: 410 InvokeTimeout.
answer too_late_answer(std::string_view id);

/// An invoke in Managed-Instances mode with no /next parked: 400 with Error-Type
/// Runtime.Unavailable, as the emulator answers it (it never queues).
answer no_idle_runtime_answer(size_t max_concurrency);
/// An invoke past -max-queue waiting ones: 429 TooManyRequestsException, Retry-After.
answer queue_full_answer(size_t max_queued);
/// A request body past -max-body-bytes: 413 RequestEntityTooLarge.
answer body_too_large_answer(size_t limit);
/// X-Amz-Client-Context that is not base64: 400 InvalidRequestContentException.
answer bad_client_context_answer(std::string_view why);

/// The invoker's answers. The function's response: 200, the body as the runtime posted it.
answer invoke_result(std::string body, std::string_view request_id);
/// A function error (an /error post, an init error, a timeout): 200 with the error body and
/// X-Amz-Function-Error: Unhandled, as Lambda's Invoke answers it.
answer invoke_error(std::string body, std::string_view request_id);
/// The invocation ran past its deadline with no answer: invoke_error with Sandbox.Timedout,
/// "RequestId: <id> Error: Task timed out after 3.00 seconds".
answer invoke_timeout(std::string_view request_id, std::int64_t timeout_ms);
/// The runtime's answer was over -max-body-bytes: invoke_error with
/// Function.ResponseSizeTooLarge.
answer invoke_too_large(std::string_view request_id, size_t limit);

}  // namespace actionloop::lambda_api
