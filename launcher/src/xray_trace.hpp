// xray_trace.hpp — the trace of an AWS X-Ray trace header, as Lambda sends it for each
// invocation (Lambda-Runtime-Trace-Id, the launcher's `lambda_trace_id`), for the W3C
// traceparent of the activation's context:
//
//     Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1
//
// `Root` is "1-" (the version), 8 hex digits (the epoch seconds) and 24 random hex digits:
// together the 32 hex digits of a W3C trace-id. `Sampled=1` means the trace is recorded
// (W3C flags 01). The fields come in any order, separated by ';' (spaces around them are
// ignored); other fields (`Parent`, `Lineage`, …) are not needed here. Pure and linear in
// the header's length; fuzzed (tests/fuzz/fuzz_xray_trace.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace actionloop {

struct xray_trace {
    std::string trace_id;  // 32 lowercase hex digits, not all zeros
    bool sampled = false;  // Sampled=1
};

/// The trace of `header`; nullopt when it has no well-formed Root (the first Root counts):
/// not "1-" + 8 + "-" + 24 hex digits (either case), or all zeros. Sampled is its first
/// value: "1" is sampled, anything else ("0", "?", none) is not.
std::optional<xray_trace> parse_xray_trace(std::string_view header);

}  // namespace actionloop
