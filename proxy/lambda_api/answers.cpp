#include "lambda_api/answers.hpp"

#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

namespace actionloop::lambda_api {
namespace {

std::string quoted(std::string_view text) {
    return nlohmann::json(std::string(text))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string quoted_id(std::string_view id) { return "'" + std::string(id) + "'"; }

}  // namespace

std::string error_json(std::string_view type, std::string_view message) {
    return "{\"errorMessage\":" + quoted(message) + ",\"errorType\":" + quoted(type) + "}\n";
}

answer lambda_error(int status, std::string_view type, std::string_view message) {
    answer a;
    a.status = status;
    a.body = error_json(type, message);
    return a;
}

answer accepted_answer() {
    answer a;
    a.status = 202;
    a.body = "{\"status\":\"OK\"}\n";
    return a;
}

answer next_answer(invoke_request invoke, const delivery& d) {
    answer a;
    a.body = std::move(invoke.event);
    a.headers.reserve(8);
    a.headers.emplace_back("Lambda-Runtime-Aws-Request-Id", std::string(d.request_id));
    a.headers.emplace_back("Lambda-Runtime-Deadline-Ms", std::to_string(d.deadline_ms));
    a.headers.emplace_back("Lambda-Runtime-Invoked-Function-Arn", std::string(d.function_arn));
    a.headers.emplace_back("Lambda-Runtime-Trace-Id", std::move(invoke.trace_id));
    if (!invoke.client_context.empty()) {
        a.headers.emplace_back("Lambda-Runtime-Client-Context", std::move(invoke.client_context));
    }
    if (!invoke.cognito_identity.empty()) {
        a.headers.emplace_back("Lambda-Runtime-Cognito-Identity",
                               std::move(invoke.cognito_identity));
    }
    if (!invoke.tenant_id.empty()) {
        a.headers.emplace_back("Lambda-Runtime-Aws-Tenant-Id", std::move(invoke.tenant_id));
    }
    if (!d.invocation_id.empty()) {
        a.headers.emplace_back("Lambda-Runtime-Invocation-Id", std::string(d.invocation_id));
    }
    return a;
}

answer not_found_answer(std::string_view target) {
    return lambda_error(404, "NotFound", "no such endpoint: " + std::string(target.substr(0, 256)));
}

answer wrong_method_answer(std::string_view method, std::string_view target,
                           std::string_view allowed) {
    answer a =
        lambda_error(405, "MethodNotAllowed",
                     std::string(method.substr(0, 16)) + " " + std::string(target.substr(0, 256)) +
                         ": this endpoint takes " + std::string(allowed));
    a.headers.emplace_back("Allow", std::string(allowed));
    return a;
}

answer too_many_next_answer(size_t parked, std::string_view bound) {
    return lambda_error(500, "Runtime.TooManyIdleRuntimes",
                        std::to_string(parked) +
                            " GET /2018-06-01/runtime/invocation/next are parked already, as "
                            "many as " +
                            std::string(bound) + " allows");
}

answer unknown_id_answer(std::string_view id) {
    return lambda_error(400, "InvalidRequestID",
                        "Invalid request ID: " + quoted_id(id) +
                            " is not an invocation handed out by /next (or it was forgotten)");
}

answer answered_id_answer(std::string_view id) {
    return lambda_error(
        400, "InvalidRequestID",
        "Invalid request ID: the invocation " + quoted_id(id) + " was answered already");
}

answer wrong_echo_answer(std::string_view id, std::string_view echoed, std::string_view given) {
    return lambda_error(400, "InvalidRequestID",
                        "Invalid request ID: the post for " + quoted_id(id) +
                            " echoes Lambda-Runtime-Invocation-Id " + quoted_id(echoed) +
                            ", not the " + quoted_id(given) + " its /next gave");
}

answer too_late_answer(std::string_view id) {
    return lambda_error(410, "InvokeTimeout",
                        "Invoke timeout: the invocation " + quoted_id(id) +
                            " is past its deadline and was answered with a timeout");
}

answer no_idle_runtime_answer(size_t max_concurrency) {
    answer a = lambda_error(
        400, "Runtime.Unavailable",
        "no idle runtime: no GET /2018-06-01/runtime/invocation/next is parked (Managed "
        "Instances mode, -max-concurrency " +
            std::to_string(max_concurrency) + ": an invoke is never queued)");
    a.headers.emplace_back("Error-Type", "Runtime.Unavailable");
    return a;
}

answer queue_full_answer(size_t max_queued) {
    answer a = lambda_error(429, "TooManyRequestsException",
                            "Rate exceeded: -max-queue (" + std::to_string(max_queued) +
                                ") invokes are waiting for a GET "
                                "/2018-06-01/runtime/invocation/next already");
    a.headers.emplace_back("Retry-After", "1");
    return a;
}

answer body_too_large_answer(size_t limit) {
    return lambda_error(413, "RequestEntityTooLarge",
                        "Exceeded maximum allowed payload size (" + std::to_string(limit) +
                            " bytes, -max-body-bytes).");
}

answer bad_client_context_answer(std::string_view why) {
    return lambda_error(400, "InvalidRequestContentException",
                        "X-Amz-Client-Context must be base64: " + std::string(why));
}

answer invoke_result(std::string body, std::string_view request_id) {
    answer a;
    a.body = std::move(body);
    a.headers.emplace_back("X-Amzn-RequestId", std::string(request_id));
    return a;
}

answer invoke_error(std::string body, std::string_view request_id) {
    answer a = invoke_result(std::move(body), request_id);
    a.headers.emplace_back("X-Amz-Function-Error", "Unhandled");
    return a;
}

answer invoke_timeout(std::string_view request_id, std::int64_t timeout_ms) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f", static_cast<double>(timeout_ms) / 1000.0);
    return invoke_error(
        error_json("Sandbox.Timedout", "RequestId: " + std::string(request_id) +
                                           " Error: Task timed out after " + seconds + " seconds"),
        request_id);
}

answer invoke_too_large(std::string_view request_id, size_t limit) {
    return invoke_error(error_json("Function.ResponseSizeTooLarge",
                                   "Response payload size exceeded maximum allowed payload size (" +
                                       std::to_string(limit) + " bytes)."),
                        request_id);
}

}  // namespace actionloop::lambda_api
