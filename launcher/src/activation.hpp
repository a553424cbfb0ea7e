// activation.hpp — how the launcher builds an activation's context from its request and makes
// it the current one (context's default constructor) while the user's function runs.
#pragma once

#include <actionloop/action.hpp>

#include <string>
#include <string_view>

#include "platform.hpp"

namespace actionloop {

/// The context fields of a request, filled member by member (string members only, as the
/// protocol sends them; `deadline` also as a number). The proxy's `proxy_deadline`, when the
/// request has one, is the context's deadline instead of `deadline` (docs/protocol.md, "The
/// bound of a /run").
///
/// For OpenWhisk, also exports each string member as __OW_<KEY>, for code that reads the
/// environment as in OpenWhisk's other runtimes. For Lambda, reads Lambda's own members
/// (`lambda_trace_id`, `lambda_client_context`, `lambda_cognito_identity`) into the context,
/// exports no __OW_ variable, and build() sets _X_AMZN_TRACE_ID to `lambda_trace_id` (unsets
/// it when the request has none), as Lambda's runtimes do for each invocation.
class context_builder {
public:
    explicit context_builder(platform mode = platform::openwhisk) : platform_(mode) {}

    /// One member of the request other than `value`: its key, and its text if it is a string.
    void add_string(std::string_view key, std::string_view text);
    /// `deadline` given as a JSON number (epoch milliseconds).
    void add_deadline_ms(long long ms);
    /// The request's `traceparent` header (value.__ow_headers.traceparent), as sent.
    void add_traceparent_header(std::string text) { traceparent_header_ = std::move(text); }
    context build();

private:
    platform platform_;
    std::string activation_id_;
    std::string action_name_;
    std::string namespace_;
    std::string api_host_;
    std::string transaction_id_;
    std::string traceparent_header_;
    std::string client_context_;
    std::string cognito_identity_;
    std::string lambda_trace_id_;
    context::time_point deadline_ = context::time_point::max();
    context::time_point proxy_deadline_ = context::time_point::max();
    bool has_proxy_deadline_ = false;
};

/// The W3C traceparent of an activation (context::traceparent()): the trace-id and flags of
/// the X-Ray header `xray` when its Root is well formed (Lambda's `lambda_trace_id`;
/// xray_trace.hpp), else those of `header` when it is valid, else a trace-id derived from
/// `transaction_id` (flags 01); the parent-id derived from `activation_id`. Empty when there
/// is neither a trace nor a transaction id.
std::string make_traceparent(std::string_view header, std::string_view transaction_id,
                             std::string_view activation_id, std::string_view xray = {});

/// While alive, `ctx` is what context's default constructor copies on this thread.
class serving {
public:
    explicit serving(const context& ctx);
    ~serving();
    serving(const serving&) = delete;
    serving& operator=(const serving&) = delete;

private:
    const context* previous_;
};

}  // namespace actionloop
