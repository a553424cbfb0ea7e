// What the local Runtime API has seen, for tests and benches: GET /_lambda-api/stats
// (docs/lambda-api.md lists the fields).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace actionloop::lambda_api {

struct api_stats {
    // Counts since the start.
    std::uint64_t invokes = 0;              // POST …/invocations received (refused ones too)
    std::uint64_t delivered = 0;            // invokes handed to a /next
    std::uint64_t responses = 0;            // …/response posts taken (202)
    std::uint64_t errors = 0;               // …/error posts taken (202)
    std::uint64_t timeouts = 0;             // invocations answered with Sandbox.Timedout
    std::uint64_t refused_invokes = 0;      // no /next parked (Managed Instances), queue full
    std::uint64_t refused_next = 0;         // a /next past the parked bound (500)
    std::uint64_t late_posts = 0;           // posts at or after the deadline (410)
    std::uint64_t unknown_ids = 0;          // posts for an id never handed out (400)
    std::uint64_t repeated_posts = 0;       // posts for an invocation answered already (400)
    std::uint64_t echo_ok = 0;              // posts echoing the right Lambda-Runtime-Invocation-Id
    std::uint64_t echo_missing = 0;         // posts without it (taken, counted)
    std::uint64_t echo_wrong = 0;           // posts echoing another one (400)
    std::uint64_t init_errors = 0;          // POST …/init/error
    std::uint64_t init_failed_invokes = 0;  // invokes answered with the recorded init error
    std::uint64_t too_large = 0;            // request bodies past -max-body-bytes (413)
    std::uint64_t gone_next = 0;            // parked /next whose client went away
    std::uint64_t gone_invokes = 0;         // queued invokes whose client went away
    // Now, and the most at once.
    std::size_t parked = 0;
    std::size_t parked_peak = 0;
    std::size_t queued = 0;
    std::size_t queued_peak = 0;
    std::size_t in_flight = 0;
    std::size_t in_flight_peak = 0;
    bool init_failed = false;  // an init error is recorded (until the next /next)
};

/// The stats as one JSON object, the fields in the order above, plus a newline.
std::string stats_json(const api_stats& s);

}  // namespace actionloop::lambda_api
