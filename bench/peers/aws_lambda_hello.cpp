// bench/lambda's peer action: the hello served by awslabs/aws-lambda-cpp's runtime, built
// against it by bench/peers/build-aws-lambda-cpp in a scratch folder outside this repository
// (never by our build: that library is not a dependency). It answers the very bytes our C++
// hello (actions/hello/hello.cpp) answers to an event without "name", so that both runtimes
// post the same response through the same Runtime API.
#include <aws/lambda-runtime/runtime.h>

namespace {

aws::lambda_runtime::invocation_response hello(
    const aws::lambda_runtime::invocation_request& /*request*/) {
    return aws::lambda_runtime::invocation_response::success(R"({"greeting":"Hello, stranger!"})",
                                                             "application/json");
}

}  // namespace

int main() {
    aws::lambda_runtime::run_handler(hello);
    return 0;
}
