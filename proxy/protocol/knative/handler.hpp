// Single-entrypoint mode: every request to the proxy but /health comes here, and becomes
// an init, a run, or both, of the classic steps (init_step, run_step), by the rules
// of docs/single-entrypoint.md: a stem cell takes its action from a request's `init`, a
// dedicated runtime from __OW_ACTION_* (initialised at start-up, its outcome answered as if
// on the first request), and the result goes back as a web-action response.
// Whether the action is initialised has one owner, the host: host.initialized() under its
// init turn (the one init lock) decides whether an init may run, and the action the host has
// installed on the loop (worker_states() not empty) whether a run may go.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "engine/activation_queue.hpp"
#include "host/action_host.hpp"
#include "protocol/exchange.hpp"
#include "protocol/knative/envelope.hpp"
#include "protocol/knative/platform.hpp"
#include "protocol/knative/web_answer.hpp"
#include "protocol/router.hpp"

namespace actionloop::knative {

class handler : public actionloop::handler {
public:
    /// A dedicated runtime starts initialising now, on a thread of its own.
    handler(action_host& host, platform_config config, activation_gate& gate);
    ~handler() override;
    handler(const handler&) = delete;
    handler& operator=(const handler&) = delete;

    bool needs_headers() const override { return true; }
    /// On the loop: /health as in the classic mode; any other request is admitted and counted
    /// as a /run (one request is one activation, its init included). A run of an initialised
    /// action is answered on the loop (a body or answer over 64 KiB is parsed on a worker);
    /// an init goes to a worker first. Past OW_MAX_QUEUED
    /// requests in the mode at once (waiting for the action, in it, or in an init), the next
    /// is answered 503 with Retry-After at once; past OW_MAX_INFLIGHT (the same requests,
    /// counted in the gate), 429 with Retry-After, and /health answers 503 until one is
    /// answered.
    void handle(actionloop::request in, reply_fn reply) override;

private:
    /// One request in flight.
    struct call {
        web_request req;
        ordered_json envelope;
        bool head = false;  // HEAD: the answer's Content-Length without its body
        reply_fn done;
    };

    template <class Step>
    std::optional<answer> guarded(Step&& step);
    void finish(call& c, answer a);
    /// The 503 of a full queue (OW_MAX_QUEUED).
    answer queue_full() const;
    /// On a worker: the init the request asks for or needs; nullopt when the run comes next.
    std::optional<answer> init_for(const ordered_json& envelope);
    /// Runs a classic init; nullopt on success, else the answer of its failure.
    std::optional<answer> init_action(const init_fields& fields);
    /// Dedicated: the init from the environment unless done (the start-up one's failure first).
    std::optional<answer> init_dedicated();
    /// The classic init itself, `turn` (the host's init turn) held.
    std::optional<answer> init_locked(const init_fields& fields,
                                      const std::unique_lock<std::mutex>& turn);
    /// On the loop: an init has installed the action there (runs may go to it).
    bool installed() const;
    /// On the loop, the envelope parsed: the run, or the init it needs first.
    void route(std::shared_ptr<call> c);
    /// `work(call&)` here, or on a worker when `off_loop`; then `next(call, result)` on the loop.
    template <class Work, class Next>
    void then_on_loop(std::shared_ptr<call> c, bool off_loop, Work work, Next next);
    /// On the loop: the run's line (translated on a worker for a big body), then start_run.
    void run_action(const std::shared_ptr<call>& c);
    /// On the loop: the activation and its web answer.
    void start_run(std::shared_ptr<call> c, std::string body);
    answer web_answer_of(const call& c, const answer& run) const;

    action_host& host_;
    activation_gate& gate_;
    platform_config config_;
    std::optional<answer> startup_failure_;  // dedicated: the start-up init's failure, once
    // The action's own: set under the init turn before each init (so before the host installs
    // the action on the loop), read by every run once it is installed; never written after a
    // successful init (every later init is refused before it writes).
    bool raw_ = false;
    std::string name_;
    std::thread warm_up_;
    admission_limit queued_;  // on the loop: the requests admitted and not yet answered
};

}  // namespace actionloop::knative
