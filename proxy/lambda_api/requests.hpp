// What the local Runtime API reads: which endpoint a request is for, and what an invoke and
// a runtime's post carry in their headers. Pure: no state, no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/exchange.hpp"

namespace actionloop::lambda_api {

enum class endpoint {
    next,          // GET  /2018-06-01/runtime/invocation/next
    response,      // POST /2018-06-01/runtime/invocation/{id}/response
    error,         // POST /2018-06-01/runtime/invocation/{id}/error
    init_error,    // POST /2018-06-01/runtime/init/error
    invoke,        // POST /2015-03-31/functions/{name}/invocations (any name)
    stats,         // GET  /_lambda-api/stats
    not_found,     // any other path
    wrong_method,  // a known path with another method
};

struct route {
    endpoint to = endpoint::not_found;
    std::string_view id;       // response and error: the request id in the path
    std::string_view allowed;  // wrong_method: the one method the path takes
};

/// The endpoint of `method` `target` (the query string ignored).
route route_of(std::string_view method, std::string_view target);

/// The value of the header `name` (case-insensitive), the first when repeated.
std::optional<std::string_view> header_of(const header_list& headers, std::string_view name);

/// What an invoke carries to the function.
struct invoke_request {
    std::string event;             // the body, as sent
    std::string trace_id;          // X-Amzn-Trace-Id ("": a fresh one is made)
    std::string client_context;    // X-Amz-Client-Context, base64-decoded ("": none)
    std::string cognito_identity;  // X-Amz-Cognito-Identity, as sent ("": none)
    std::string tenant_id;         // X-Amz-Tenant-Id ("": none)
};

/// The invoke's fields from its headers and body. Throws std::invalid_argument saying why when
/// X-Amz-Client-Context is not base64 or decodes to a control character (CR, LF, NUL …: it
/// goes out again as a header).
invoke_request read_invoke(const header_list& headers, std::string body);

/// What a runtime posts to …/{id}/response or …/{id}/error.
struct runtime_post {
    std::string request_id;
    std::string body;
    std::optional<std::string> invocation_id;  // Lambda-Runtime-Invocation-Id, when echoed
    std::string error_type;                    // Lambda-Runtime-Function-Error-Type ("": none)
};

runtime_post read_post(std::string_view request_id, const header_list& headers, std::string body);

}  // namespace actionloop::lambda_api
