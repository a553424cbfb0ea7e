// The classic protocol's handler (docs/protocol.md): /init, /run and /health on the exact
// path, anything else 200 with an empty body, as upstream. /init and /run are admitted
// (503 while the proxy drains; /run 429 past OW_MAX_INFLIGHT) and counted in /metrics when
// answered; /run goes to the action on the loop's thread, /init to a worker.
#pragma once

#include <string_view>

#include "engine/activation_queue.hpp"
#include "host/action_host.hpp"
#include "ops/metrics.hpp"
#include "ops/shutdown.hpp"
#include "protocol/exchange.hpp"

namespace actionloop {

enum class route { init, run, health, other };

/// /init, /run and /health on the exact path (the query string ignored), any method;
/// anything else is `other`.
route route_of(std::string_view target);

/// What every activation passes on its way in and is counted by on its way out, in both
/// modes (on the loop).
struct activation_gate {
    drain_state& drain;
    activation_metrics& metrics;
    /// OW_MAX_INFLIGHT (max 0: none): the runs admitted and not answered yet, queued or in the
    /// action (in single-entrypoint mode every request to /, its init included).
    admission_limit& inflight;
};

class router : public handler {
public:
    router(action_host& host, activation_gate& gate) : host_(host), gate_(gate) {}

    void handle(request req, reply_fn reply) override;

private:
    action_host& host_;
    activation_gate& gate_;
};

/// Admits `req` as an activation (an /init or a /run): its place in the drain is held in
/// req.ticket, a run's in `gate.inflight` until its answer, and the returned function counts
/// the answer in the metrics before `reply` gets it. Otherwise answers through `reply` at once
/// and returns an empty function: 503 while the proxy drains (counted as an activation), and
/// for a run 429 past OW_MAX_INFLIGHT (counted as a refusal), before the body is looked at.
reply_fn admit(request& req, activation_gate& gate, bool is_run, reply_fn reply);

}  // namespace actionloop
