// platform.hpp — which platform's conventions the launcher follows, decided once when it starts.
//
// OpenWhisk's (also single-entrypoint mode's): `value` is an object or an array, a failure is
// the answer {"error": …}, and a pipelined activation ends with the sentinels. AWS Lambda's,
// when the proxy is Lambda's runtime client (docs/SDK.md, "On AWS Lambda"): `value` is any
// JSON, a failure is one {"__lambda_error": …} line, there are no sentinels, and the context
// carries Lambda's own fields.
#pragma once

namespace actionloop {

enum class platform { openwhisk, lambda };

/// lambda when AWS_LAMBDA_RUNTIME_API is set and not empty (the proxy is then the Lambda
/// runtime client, and its action process inherits the variable), else openwhisk. The loop
/// calls it once, before the first activation: the mode costs an activation nothing.
platform platform_of_environment();

}  // namespace actionloop
