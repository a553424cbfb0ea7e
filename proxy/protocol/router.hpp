// The classic protocol's handler (docs/protocol.md): /init, /run and /health on the exact
// path, anything else 200 with an empty body, as upstream. /init and /run are admitted
// (503 while the proxy drains) and counted in /metrics when answered; /run goes to the
// action on the loop's thread, /init to a worker.
#pragma once

#include <string_view>

#include "host/action_host.hpp"
#include "ops/metrics.hpp"
#include "ops/shutdown.hpp"
#include "protocol/exchange.hpp"

namespace actionloop {

enum class route { init, run, health, other };

/// /init, /run and /health on the exact path (the query string ignored), any method;
/// anything else is `other`.
route route_of(std::string_view target);

class router : public handler {
public:
    router(action_host& host, drain_state& drain, activation_metrics& metrics)
        : host_(host), drain_(drain), metrics_(metrics) {}

    void handle(request req, reply_fn reply) override;

private:
    action_host& host_;
    drain_state& drain_;
    activation_metrics& metrics_;
};

/// Admits `req` as an activation (an /init or a /run): its place in `drain` is held in
/// req.ticket, and the returned function counts the answer in `metrics` before `reply` gets
/// it. While the proxy drains, answers 503 through `reply` (counted) and returns an empty
/// function.
reply_fn admit(request& req, drain_state& drain, activation_metrics& metrics, bool is_run,
               reply_fn reply);

}  // namespace actionloop
