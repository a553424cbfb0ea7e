// An activation's context from its request (launcher/src/activation.hpp): in Lambda mode,
// Lambda's fields, the traceparent from the X-Ray header and _X_AMZN_TRACE_ID set for the
// activation (unset when it has none), no __OW_* export; in OpenWhisk mode none of that.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "activation.hpp"

using namespace actionloop;

namespace {

const std::string XRAY =
    "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
const std::string REQUEST_ID = "8476a536-e9f4-11e8-9739-2dfe598c3fcd";

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "<unset>";
}

// The parent-id the launcher derives from an activation id, as in OpenWhisk mode.
std::string parent_of(const std::string& activation_id) {
    return make_traceparent("", "any transaction", activation_id).substr(36, 16);
}

context lambda_context(const std::string& trace) {
    context_builder builder(platform::lambda);
    builder.add_string("activation_id", REQUEST_ID);
    builder.add_string("action_name", "arn:aws:lambda:us-east-1:012345678912:function:f");
    if (!trace.empty()) builder.add_string("lambda_trace_id", trace);
    return builder.build();
}

}  // namespace

TEST_CASE("activation: Lambda's fields are in the context, raw, and nowhere else") {
    ::unsetenv("__OW_LAMBDA_TRACE_ID");
    ::unsetenv("__OW_LAMBDA_CLIENT_CONTEXT");
    context_builder builder(platform::lambda);
    builder.add_string("activation_id", REQUEST_ID);
    builder.add_string("action_name", "arn:aws:lambda:us-east-1:012345678912:function:f");
    builder.add_string("deadline", "4102444800000");  // 2100-01-01
    builder.add_string("lambda_trace_id", XRAY);
    builder.add_string("lambda_client_context", R"({"client":{"app_title":"x"},"custom":{}})");
    builder.add_string("lambda_cognito_identity", R"({"cognitoIdentityId":"id","pool":"p"})");
    const context ctx = builder.build();
    CHECK(ctx.activation_id() == REQUEST_ID);
    CHECK(ctx.action_name() == "arn:aws:lambda:us-east-1:012345678912:function:f");
    CHECK(ctx.deadline() == context::time_point(std::chrono::milliseconds(4102444800000LL)));
    CHECK(ctx.lambda_trace_id() == XRAY);
    CHECK(ctx.client_context() == R"({"client":{"app_title":"x"},"custom":{}})");
    CHECK(ctx.cognito_identity() == R"({"cognitoIdentityId":"id","pool":"p"})");
    CHECK(env("_X_AMZN_TRACE_ID") == XRAY);
    // No __OW_ variable for Lambda's members (nor for the others: Lambda has no such names).
    CHECK(env("__OW_LAMBDA_TRACE_ID") == "<unset>");
    CHECK(env("__OW_LAMBDA_CLIENT_CONTEXT") == "<unset>");
    ::unsetenv("_X_AMZN_TRACE_ID");
}

TEST_CASE("activation: the traceparent takes the X-Ray Root and Sampled, the parent-id as today") {
    const std::string parent = parent_of(REQUEST_ID);
    CHECK(lambda_context(XRAY).traceparent() ==
          "00-5759e988bd862e3fe1be46a994272793-" + parent + "-01");
    CHECK(lambda_context("Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=0").traceparent() ==
          "00-5759e988bd862e3fe1be46a994272793-" + parent + "-00");
    CHECK(lambda_context("Root=1-5759e988-bd862e3fe1be46a994272793").traceparent() ==
          "00-5759e988bd862e3fe1be46a994272793-" + parent + "-00");
    // A malformed header is no trace: no traceparent (there is no transaction id either),
    // but the header is still the context's and the environment's, as sent.
    const context malformed = lambda_context("Root=1-xyz;Sampled=1");
    CHECK(malformed.traceparent() == "");
    CHECK(malformed.lambda_trace_id() == "Root=1-xyz;Sampled=1");
    CHECK(env("_X_AMZN_TRACE_ID") == "Root=1-xyz;Sampled=1");
    CHECK(lambda_context("").traceparent() == "");
    // The X-Ray trace comes before a traceparent header.
    context_builder builder(platform::lambda);
    builder.add_string("activation_id", REQUEST_ID);
    builder.add_string("lambda_trace_id", XRAY);
    builder.add_traceparent_header("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00");
    CHECK(builder.build().traceparent() == "00-5759e988bd862e3fe1be46a994272793-" + parent + "-01");
    ::unsetenv("_X_AMZN_TRACE_ID");
}

TEST_CASE("activation: _X_AMZN_TRACE_ID is the activation's, unset for one without a trace") {
    ::setenv("_X_AMZN_TRACE_ID", "from the start", 1);
    (void)lambda_context("");
    CHECK(env("_X_AMZN_TRACE_ID") == "<unset>");
    (void)lambda_context(XRAY);
    CHECK(env("_X_AMZN_TRACE_ID") == XRAY);
    (void)lambda_context("Root=1-00000000-000000000000000000000001");
    CHECK(env("_X_AMZN_TRACE_ID") == "Root=1-00000000-000000000000000000000001");
    // What the action set itself is gone with the next activation either way.
    ::setenv("_X_AMZN_TRACE_ID", "the action's", 1);
    (void)lambda_context(XRAY);
    CHECK(env("_X_AMZN_TRACE_ID") == XRAY);
    ::setenv("_X_AMZN_TRACE_ID", "the action's", 1);
    (void)lambda_context("");
    CHECK(env("_X_AMZN_TRACE_ID") == "<unset>");
    (void)lambda_context("");
    CHECK(env("_X_AMZN_TRACE_ID") == "<unset>");
    (void)lambda_context(XRAY);
    CHECK(env("_X_AMZN_TRACE_ID") == XRAY);
    ::unsetenv("_X_AMZN_TRACE_ID");
}

TEST_CASE("activation: OpenWhisk mode reads no Lambda field and sets no _X_AMZN_TRACE_ID") {
    ::setenv("_X_AMZN_TRACE_ID", "untouched", 1);
    context_builder builder;  // OpenWhisk's, the default
    builder.add_string("activation_id", "0123456789abcdef0123456789abcdef");
    builder.add_string("lambda_trace_id", XRAY);
    builder.add_string("lambda_client_context", "{}");
    const context ctx = builder.build();
    CHECK(ctx.lambda_trace_id() == "");
    CHECK(ctx.client_context() == "");
    CHECK(ctx.cognito_identity() == "");
    CHECK(ctx.traceparent() == "");  // no header, no transaction id: as before
    CHECK(env("_X_AMZN_TRACE_ID") == "untouched");
    // Its members are exported as any other, as before.
    CHECK(env("__OW_LAMBDA_TRACE_ID") == XRAY);
    CHECK(env("__OW_ACTIVATION_ID") == "0123456789abcdef0123456789abcdef");
    ::unsetenv("_X_AMZN_TRACE_ID");
}
