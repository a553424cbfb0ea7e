// What an /init or /run came to: decided once, where its answer is made (protocol/), carried
// in the answer (protocol/exchange.hpp), and counted by ops/metrics as it is.
#pragma once

#include <cstddef>

namespace actionloop {

enum class activation_outcome : std::size_t {
    success,            // 200, and the action's answer has no top-level "error"
    application_error,  // 200 with a top-level "error": the action reported a failure
    crash,              // /run: the action process died during the activation
    action_error,       // 502: bad or oversized answer, deadline, compile or start failure
    rejected,           // any other 4xx or 500: bad /init body, re-init, no action yet
    shutting_down,      // 503: refused during the drain
};
inline constexpr std::size_t OUTCOMES = 6;

}  // namespace actionloop
