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

/// A failure of `step` ("/init", "/run") as its answer: an http_error keeps its status and
/// text, any other exception is 502 with its text (and logged).
http_answer failure_answer(const char* step, const std::exception& error);

/// Runs /init or /run and waits for it (on a worker: /init compiles and starts the action;
/// /run, from single-entrypoint mode, waits for the event loop) and turns any failure into its
/// answer: as failure_answer(), and anything but an exception is 500.
http_answer answer_for(action_proxy& proxy, route which, const std::string& body);

/// The text of the 413 answer.
std::string too_large_message(size_t limit);

}  // namespace actionloop
