// The identifiers the local Runtime API hands out: request ids (and the invocation ids of
// Lambda-Runtime-Invocation-Id) as random UUIDs, and X-Ray trace headers, from a seeded
// generator so that the unit tests see the same ones every run.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace actionloop::lambda_api {

class id_source {
public:
    explicit id_source(std::uint64_t seed) : random_(seed) {}

    /// A version 4 UUID, lower-case, 8-4-4-4-12 hex digits, as Lambda's request ids are
    /// (e.g. "8476a536-e9f4-41e8-9739-2dfe598c3fcd").
    std::string uuid();

    /// An X-Ray tracing header for a request at `now_ms` (Unix epoch milliseconds):
    /// "Root=1-<the epoch second, 8 hex digits>-<24 hex digits>;Parent=<16 hex digits>;Sampled=1".
    std::string trace_header(std::int64_t now_ms);

private:
    std::mt19937_64 random_;
};

}  // namespace actionloop::lambda_api
