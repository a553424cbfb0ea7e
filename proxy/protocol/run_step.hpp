// /run (the /run table of docs/protocol.md): the request's deadline (or OW_RUN_TIMEOUT_MS; a
// client's deadline in single-entrypoint mode never later than OW_RUN_TIMEOUT_MS; the action
// told that bound in `proxy_deadline` when it is not the request's `deadline`), the activation on
// the host, and its outcome as the answer: the action's line, or an error for a crash, a missed
// deadline, an oversized or non-JSON answer, no action.
#pragma once

#include <string>

#include "host/action_host.hpp"
#include "protocol/exchange.hpp"

namespace actionloop {

/// Who checks that an answer line is one JSON object or array.
enum class answer_check {
    here,       // run_step: a line that is not gets not_object_answer()
    by_caller,  // the caller parses the line anyway (single-entrypoint mode): no second pass
};

/// Who sent the request's `deadline`, and so how far it is believed.
enum class deadline_source {
    platform,  // classic /run: the invoker's, trusted (upstream): it may exceed OW_RUN_TIMEOUT_MS
    client,    // single-entrypoint mode: any client's; clamped to OW_RUN_TIMEOUT_MS
};

/// On the loop: runs `body` and gives its answer to `done`, on the loop.
void run_step(action_host& host, std::string body, reply_fn done,
              answer_check check = answer_check::here,
              deadline_source source = deadline_source::platform);

/// 502 "The action did not return a dictionary or array." (upstream's text).
answer not_object_answer();

}  // namespace actionloop
