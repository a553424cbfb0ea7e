// actionloop/action.hpp — the whole public contract for C++ OpenWhisk actions.
//
// Write one function and nothing else:
//
//     #include <actionloop/action.hpp>   // optional: brings <nlohmann/json.hpp> and the context
//
//     nlohmann::json main(nlohmann::json args) {          // or (const nlohmann::json& args)
//         return {{"greeting", "Hello, " + args.value("name", std::string("stranger"))}};
//     }
//
// or, to see the activation being served (its id, action name, deadline), take the context as
// a second parameter:
//
//     nlohmann::json main(nlohmann::json args, const actionloop::context& ctx) {
//         return {{"id", ctx.activation_id()}, {"ms_left", ctx.time_left().count()}};
//     }
//
// The context also carries the trace: ctx.transaction_id() (OpenWhisk's transaction id) and
// ctx.traceparent(), a W3C `traceparent` header value to send with your outgoing calls:
//
//     httplib::Headers headers = {{"traceparent", ctx.traceparent()}};
//
// Any function name works (`/init`'s `main`, actionloop_add_action's MAIN). `compile` (and
// actionloop_add_action) compiles the file that defines it through a wrapper that checks its
// signature (one of the shapes here; anything else is a compile error naming them) and hands
// it to the launcher, which owns the real `int main()` (a `main` of yours is renamed in that
// file only: a global `main` must return int) and runs the activation loop:
//   * one JSON request per line on stdin, one compact JSON answer per line on fd 3;
//   * `args` is the request's `value` (an object, an array, or {} when absent);
//   * every other string field of the request is in the context, and is also exported as
//     __OW_<FIELD> for code that reads the environment, as OpenWhisk's other runtimes do;
//   * an exception becomes the answer {"error": what()} (also printed on stderr), and the
//     process keeps serving; globals live as long as the warm process.
//
// Opt-in raw entry point, for an action whose cost is parsing a big `value` (a batch of
// events): define this overload instead, and parse with whatever you like (no DOM is built):
//
//     void main(std::string_view value, std::string& answer);
//     void main(std::string_view value, std::string& answer, const actionloop::context& ctx);
//
//   * `value` is the request's `value` as raw JSON text, unvalidated ("{}" when absent or not
//     an object or array); it points into the request line and is valid during the call;
//   * append one JSON object or array to `answer` (empty on entry; its capacity is reused);
//     newlines in it become spaces;
//   * the context is given and exceptions are answered exactly as above.
// When both kinds are defined, the raw one is used.
//
// On AWS Lambda (the proxy is the Lambda runtime client: AWS_LAMBDA_RUNTIME_API is set when
// the action starts; docs/SDK.md, "On AWS Lambda") the same function serves Lambda's events:
//   * `args` is the event as it is, any JSON (an object, an array, a string, a number, true,
//     false or null); the raw entry point gets its text as it is;
//   * any JSON answer is the response (a string, a number, null …); an {"error": …} you return
//     is a response like any other;
//   * an exception is the invocation's error, posted to Lambda as {"errorMessage": what(),
//     "errorType": the exception's type, e.g. "std::out_of_range", "stackTrace": []} (a
//     non-std exception: "unknown exception", "Unknown"), and the process keeps serving;
//   * the context has Lambda's fields: activation_id() is the request id, action_name() the
//     function's ARN, deadline() Lambda's, and client_context(), cognito_identity() and
//     lambda_trace_id() below; _X_AMZN_TRACE_ID is set for each invocation that has a trace
//     (and unset for one that has none), as Lambda's other runtimes do. No __OW_* variables.
//
// Optional lifecycle hooks, for what outlives one activation (a database connection, a
// client pool): define either or both as global functions in the file that defines the entry
// point (or in a header it includes; the launcher finds them there, as it finds `main`):
//
//     void on_init();                                         // once per action process
//     void on_shutdown(std::chrono::milliseconds time_left);  // once, when the proxy drains
//
//   * on_init runs once in each action process, after /init started it and before its first
//     activation (again in the new process after a crash restarted it). An exception from it
//     fails the /init: the answer says "The action did not initialize properly. on_init:
//     <what()>" (also printed on stderr). Without OW_WAIT_FOR_ACK (the image sets it) the
//     process just exits and the next activation gets "command exited".
//   * on_shutdown runs when the proxy got SIGTERM and its drain has finished the activations
//     in flight; `time_left` is what remains of OW_SHUTDOWN_TIMEOUT_MS. Return within it (the
//     process is killed then); the process exits after it returns. It does not run when the
//     drain ran out of time, on a second SIGTERM or SIGINT, or outside this proxy.
//   * Other signatures (a return value, other parameters, a namespace) are not hooks and are
//     ignored; what either hook prints goes to the action's log like the activations' output.
#ifndef ACTIONLOOP_ACTION_HPP
#define ACTIONLOOP_ACTION_HPP

#include <chrono>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace actionloop {

/// The activation being served: the request's fields other than `value`.
class context {
public:
    using time_point = std::chrono::system_clock::time_point;

    /// A copy of the context of the activation this thread is serving (empty fields and no
    /// deadline outside an activation). The context parameter of `main` is the same value.
    context();
    /// A context with the given fields (for calling your function from your own tests).
    context(std::string activation_id, std::string action_name, std::string ns,
            std::string api_host, time_point deadline = time_point::max());

    /// `activation_id`, e.g. "2a1c…"; on AWS Lambda the request id
    /// (Lambda-Runtime-Aws-Request-Id).
    const std::string& activation_id() const { return activation_id_; }
    /// `action_name`, e.g. "/guest/alerts/monitor"; on AWS Lambda the function's ARN
    /// (Lambda-Runtime-Invoked-Function-Arn).
    const std::string& action_name() const { return action_name_; }
    /// `namespace` of the activation.
    const std::string& ns() const { return namespace_; }
    /// `api_host`, for calling back into OpenWhisk.
    const std::string& api_host() const { return api_host_; }
    /// The deadline the proxy applies to the activation: the platform's `deadline` (epoch
    /// milliseconds) when it is in the future, else the request's arrival plus
    /// OW_RUN_TIMEOUT_MS (the request's `proxy_deadline`; docs/protocol.md, "The bound of a
    /// /run"); time_point::max() when there is no bound (OW_RUN_TIMEOUT_MS=0). On AWS Lambda
    /// the platform's deadline is Lambda-Runtime-Deadline-Ms.
    time_point deadline() const { return deadline_; }
    /// Time left before that deadline: zero once it has passed, one year (24 × 365 hours) when
    /// there is none.
    std::chrono::milliseconds time_left() const;
    /// `transaction_id`: the OpenWhisk transaction the activation belongs to (the `tid` in the
    /// controller's and invoker's logs, also __OW_TRANSACTION_ID); put it in your log lines
    /// and pass it on to the services you call. Empty when the platform did not send one.
    const std::string& transaction_id() const { return transaction_id_; }
    /// A W3C trace context for outgoing calls, the value of a `traceparent` header:
    /// "00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>". The trace-id is the one of the
    /// request's own `traceparent` header when it has a valid one (a web action, or Knative
    /// mode: `value.__ow_headers.traceparent`, flags kept), else derived from the transaction
    /// id (the same id always gives the same trace-id, flags 01); the parent-id names this
    /// activation (derived from its activation id). Empty when there is neither a header nor
    /// a transaction id. On AWS Lambda the trace-id and flags come from lambda_trace_id() when
    /// it has a well-formed Root (before the header and the transaction id).
    const std::string& traceparent() const { return traceparent_; }
    /// On AWS Lambda: the invocation's client context, the Lambda-Runtime-Client-Context header
    /// as Lambda sent it (JSON text, from an AWS Mobile SDK client); empty when there is none,
    /// and elsewhere.
    const std::string& client_context() const { return client_context_; }
    /// On AWS Lambda: the caller's Amazon Cognito identity, the
    /// Lambda-Runtime-Cognito-Identity header as Lambda sent it (JSON text); empty when there
    /// is none, and elsewhere.
    const std::string& cognito_identity() const { return cognito_identity_; }
    /// On AWS Lambda: the invocation's AWS X-Ray trace header, Lambda-Runtime-Trace-Id, e.g.
    /// "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1" (also in
    /// _X_AMZN_TRACE_ID during the invocation); empty when there is none, and elsewhere. When
    /// its Root is well formed, traceparent() carries the same trace: trace-id
    /// "5759e988bd862e3fe1be46a994272793", flags 01 when Sampled=1, else 00.
    const std::string& lambda_trace_id() const { return lambda_trace_id_; }

private:
    friend class context_builder;  // the launcher sets the fields below
    std::string activation_id_;
    std::string action_name_;
    std::string namespace_;
    std::string api_host_;
    time_point deadline_ = time_point::max();
    std::string transaction_id_;
    std::string traceparent_;
    // Added last, so the members before keep their places.
    std::string client_context_;
    std::string cognito_identity_;
    std::string lambda_trace_id_;
};

}  // namespace actionloop
#endif  // ACTIONLOOP_ACTION_HPP
