// /run (the /run table of docs/protocol.md): the request's deadline (or OW_RUN_TIMEOUT_MS; a
// client's deadline in single-entrypoint mode never later than OW_RUN_TIMEOUT_MS; the action
// told that bound in `proxy_deadline` when it is not the request's `deadline`), the activation on
// the host, and its outcome as the answer: the action's line, or an error for a crash, a missed
// deadline, an oversized or non-JSON answer, no action.
#pragma once

#include <string>
#include <string_view>

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

/// Which bound stops an activation (docs/protocol.md, "The bound of a /run"): the request's
/// deadline, or OW_RUN_TIMEOUT_MS because the request had none (`missing`), one already passed
/// on arrival (`passed`), one that is no time (`unusable`: not a number, or centuries away), or
/// a client's later than the setting (`clamped`); `none` when OW_RUN_TIMEOUT_MS is 0.
enum class run_bound { deadline, missing, passed, unusable, clamped, none };

/// On the loop: runs `body` and gives its answer to `done`, on the loop.
void run_step(action_host& host, std::string body, reply_fn done,
              answer_check check = answer_check::here,
              deadline_source source = deadline_source::platform);

/// One activation's result as its /run answer, with its outcome: the action's line (a success,
/// or an application error when it has a top-level "error"), or the error of a crash, a missed
/// bound (`by`: which one, for the text), an oversized or non-JSON answer, no action.
answer run_answer(const settings& config, activation_result result, run_bound by,
                  answer_check check);

/// True when `line` is a JSON object with an "error" member at its top level, found by the
/// shared scanner (actionloop/detail/json_scan.hpp), only when the text holds "error" at all.
/// The one place an answer is looked into for its outcome.
bool has_top_level_error(std::string_view line);

/// 502 "The action did not return a dictionary or array." (upstream's text).
answer not_object_answer();

}  // namespace actionloop
