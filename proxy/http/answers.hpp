// The one place where the outcome of /init and /run becomes an HTTP answer: every failure
// the proxy reports is an http_error (its status and message), rendered as {"error":"…"}.
#pragma once

#include <cstddef>
#include <string>

#include "action_proxy.hpp"

namespace actionloop {

enum class route { init, run, health, other };

/// /init, /run and /health on the exact path (the query string ignored), any method;
/// anything else is `other` (upstream answers it 200 with an empty body).
route route_of(std::string_view target);

/// Runs /init or /run (blocking: the action, the compiler) and turns any failure into its
/// answer: http_error keeps its status, any other exception is 502, anything else 500.
http_answer answer_for(action_proxy& proxy, route which, const std::string& body);

/// The text of the 413 answer.
std::string too_large_message(size_t limit);

}  // namespace actionloop
