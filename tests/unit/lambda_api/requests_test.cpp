// Which endpoint a request is for, and what an invoke and a runtime's post carry.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "lambda_api/requests.hpp"

using namespace actionloop;
using namespace actionloop::lambda_api;

TEST_CASE("requests: the runtime endpoints, the invoke and the stats by method and path") {
    CHECK(route_of("GET", "/2018-06-01/runtime/invocation/next").to == endpoint::next);
    const route response = route_of("POST", "/2018-06-01/runtime/invocation/abc-1/response");
    CHECK(response.to == endpoint::response);
    CHECK(response.id == "abc-1");
    const route error = route_of("POST", "/2018-06-01/runtime/invocation/abc-2/error");
    CHECK(error.to == endpoint::error);
    CHECK(error.id == "abc-2");
    CHECK(route_of("POST", "/2018-06-01/runtime/init/error").to == endpoint::init_error);
    CHECK(route_of("POST", "/2015-03-31/functions/function/invocations").to == endpoint::invoke);
    CHECK(route_of("POST", "/2015-03-31/functions/my-fn/invocations").to == endpoint::invoke);
    CHECK(route_of("GET", "/_lambda-api/stats").to == endpoint::stats);
}

TEST_CASE("requests: the query string is ignored") {
    CHECK(route_of("GET", "/2018-06-01/runtime/invocation/next?x=1").to == endpoint::next);
    CHECK(route_of("POST", "/2015-03-31/functions/function/invocations?Qualifier=1").to ==
          endpoint::invoke);
}

TEST_CASE("requests: a known path with another method names the one it takes") {
    const route next = route_of("POST", "/2018-06-01/runtime/invocation/next");
    CHECK(next.to == endpoint::wrong_method);
    CHECK(next.allowed == "GET");
    const route response = route_of("GET", "/2018-06-01/runtime/invocation/x/response");
    CHECK(response.to == endpoint::wrong_method);
    CHECK(response.allowed == "POST");
    CHECK(route_of("GET", "/2015-03-31/functions/function/invocations").allowed == "POST");
}

TEST_CASE("requests: any other path is not found") {
    for (const char* path :
         {"/", "/2018-06-01/runtime/invocation/", "/2018-06-01/runtime/invocation//response",
          "/2018-06-01/runtime/invocation/x/y/response", "/2018-06-01/runtime/invocation/x/other",
          "/2015-03-31/functions//invocations", "/2015-03-31/functions/a/b/invocations",
          "/_lambda-api/statsx"}) {
        CAPTURE(path);
        CHECK(route_of("POST", path).to == endpoint::not_found);
    }
}

TEST_CASE("requests: an invoke's fields come from its headers, in any case") {
    const header_list headers{{"x-amzn-trace-id", "Root=1-a-b;Parent=c;Sampled=1"},
                              {"X-AMZ-CLIENT-CONTEXT", "eyJjbGllbnQiOnsiYXBwIjoxfX0="},
                              {"X-Amz-Cognito-Identity", "{\"cognitoIdentityId\":\"id\"}"},
                              {"X-Amz-Tenant-Id", "tenant-7"}};
    const invoke_request invoke = read_invoke(headers, "[1,2]");
    CHECK(invoke.event == "[1,2]");
    CHECK(invoke.trace_id == "Root=1-a-b;Parent=c;Sampled=1");
    CHECK(invoke.client_context == R"({"client":{"app":1}})");
    CHECK(invoke.cognito_identity == R"({"cognitoIdentityId":"id"})");
    CHECK(invoke.tenant_id == "tenant-7");
}

TEST_CASE("requests: an invoke without those headers has none of them") {
    const invoke_request invoke = read_invoke({}, "");
    CHECK(invoke.event.empty());
    CHECK(invoke.trace_id.empty());
    CHECK(invoke.client_context.empty());
    CHECK(invoke.cognito_identity.empty());
    CHECK(invoke.tenant_id.empty());
}

TEST_CASE("requests: a client context that is not base64, or decodes to a control character, "
          "is refused with the reason") {
    CHECK_THROWS_WITH_AS(read_invoke({{"X-Amz-Client-Context", "not*base64"}}, "{}"),
                         "illegal base64 data at input byte 3", std::invalid_argument);
    // "a\r\nb" in base64: it would go out again as a header, split in two.
    CHECK_THROWS_WITH_AS(read_invoke({{"X-Amz-Client-Context", "YQ0KYg=="}}, "{}"),
                         "it decodes to a control character at byte 1", std::invalid_argument);
}

TEST_CASE("requests: a post carries its id, body, echoed invocation id and error type") {
    const runtime_post post =
        read_post("id-1",
                  {{"lambda-runtime-invocation-id", "inv-1"},
                   {"Lambda-Runtime-Function-Error-Type", "std::runtime_error"}},
                  "{\"errorMessage\":\"x\"}");
    CHECK(post.request_id == "id-1");
    CHECK(post.body == "{\"errorMessage\":\"x\"}");
    CHECK(post.invocation_id == std::optional<std::string>("inv-1"));
    CHECK(post.error_type == "std::runtime_error");
    const runtime_post bare = read_post("id-2", {}, "");
    CHECK_FALSE(bare.invocation_id.has_value());
    CHECK(bare.error_type.empty());
}
