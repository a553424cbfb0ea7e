// /run (the /run table of docs/protocol.md): the request's deadline (or OW_RUN_TIMEOUT_MS),
// the activation on the host, and its outcome as the answer: the action's line, or an error
// for a crash, a missed deadline, an oversized or non-JSON answer, no action.
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

/// On the loop: runs `body` and gives its answer to `done`, on the loop.
void run_step(action_host& host, std::string body, reply_fn done,
              answer_check check = answer_check::here);

/// 502 "The action did not return a dictionary or array." (upstream's text).
answer not_object_answer();

}  // namespace actionloop
