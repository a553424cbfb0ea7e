#include "protocol/router.hpp"

#include <chrono>

#include <boost/asio/post.hpp>

#include "protocol/error_answer.hpp"
#include "protocol/health.hpp"
#include "protocol/init_step.hpp"
#include "protocol/run_step.hpp"

namespace actionloop {

route route_of(std::string_view target) {
    const std::string_view path = target.substr(0, target.find('?'));
    if (path == "/init") return route::init;
    if (path == "/run") return route::run;
    if (path == "/health") return route::health;
    return route::other;
}

reply_fn admit(request& req, activation_gate& gate, bool is_run, reply_fn reply) {
    const auto started = std::chrono::steady_clock::now();
    const size_t request_bytes = req.body.size();
    if (!gate.drain.enter()) {  // shutting down: the invoker takes it elsewhere
        answer refused = shutting_down_answer();
        gate.metrics.record(is_run, refused.outcome, request_bytes, refused.body.size(),
                            std::chrono::nanoseconds::zero());
        reply(std::move(refused));
        return {};
    }
    req.ticket->emplace(gate.drain);  // a drain waits for this answer's write, whatever it is
    if (is_run && !gate.inflight.try_enter()) {  // no queuing: the client retries
        gate.metrics.refused(activation_metrics::refusal_reason::inflight);
        reply(inflight_full_answer(gate.inflight.max()));
        return {};
    }
    return [&gate, is_run, request_bytes, started, reply = std::move(reply)](answer a) {
        if (is_run) gate.inflight.leave();
        gate.metrics.record(is_run, a.outcome, request_bytes, a.body.size(),
                            std::chrono::steady_clock::now() - started);
        reply(std::move(a));
    };
}

void router::handle(request req, reply_fn reply) {
    const route which = route_of(req.target);
    if (which == route::health) {  // probes do not depend on the platform
        reply(health_answer(gate_.drain.draining(), host_));
        return;
    }
    if (which == route::other) {  // upstream: 200, nothing
        answer nothing;
        nothing.json = false;
        reply(std::move(nothing));
        return;
    }
    reply_fn done = admit(req, gate_, which == route::run, std::move(reply));
    if (!done) return;
    if (which == route::run) {  // on this thread, start to end (engine/engine.hpp)
        run_step(host_, std::move(req.body), std::move(done));
        return;
    }
    // /init blocks (extraction, the compiler, the action's start): on a worker; the answer
    // comes back to the loop.
    host_.init_started();
    boost::asio::post(host_.workers(), [this, body = std::move(req.body),
                                        done = std::move(done)]() mutable {
        answer a = init_step(host_, body);
        boost::asio::post(host_.loop(), [this, a = std::move(a), done = std::move(done)]() mutable {
            host_.init_finished();
            done(std::move(a));
        });
    });
}

}  // namespace actionloop
