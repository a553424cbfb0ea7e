// lambda-api's command line: Go-style flags (single or double dash, a value after a space or
// '='), each with its bound; help_text() (`lambda-api -h`) and docs/lambda-api.md list the
// same flags and defaults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace actionloop::lambda_api {

struct api_options {
    std::string host = "127.0.0.1";               // -host ADDR
    int port = 9001;                              // -port N
    size_t max_concurrency = 0;                   // -max-concurrency N (0: classic mode)
    std::int64_t timeout_ms = 3000;               // -timeout SECONDS (milliseconds at most)
    std::string function_name = "test_function";  // -function-name NAME
    bool invocation_ids = false;                  // -invocation-id
    size_t max_queue = 1000;                      // -max-queue N (classic mode)
    size_t max_parked = 1024;                     // -max-parked N (classic mode)
    size_t max_body_bytes = 6u << 20;             // -max-body-bytes N
    size_t keep_ids = 10000;                      // -keep-ids N
    int spin_us = 50;                             // -spin-us N (http/event_loop.hpp)
    bool debug = false;                           // -debug: every request logged
    bool version = false;                         // -version
    bool help = false;                            // -h, -help
};

/// Parses argv. Throws std::invalid_argument with the reason and the usage line on an unknown
/// flag, a missing value or a value out of its bounds.
api_options parse_options(int argc, const char* const* argv);

/// `lambda-api -h`: what it is, and every flag with its default.
std::string help_text();

/// The ARN Lambda-Runtime-Invoked-Function-Arn carries, as the emulator makes it:
/// arn:aws:lambda:us-east-1:012345678912:function:NAME.
std::string function_arn(const std::string& name);

}  // namespace actionloop::lambda_api
