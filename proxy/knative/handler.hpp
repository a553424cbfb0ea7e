// Single-entrypoint mode: every request to the proxy comes here (session.cpp), and becomes
// an init, a run, or both, of the classic engine (action_proxy::init / run), by the rules
// of docs/single-entrypoint.md: a stem cell takes its action from a request's `init`, a
// dedicated runtime from __OW_ACTION_* (initialised at start-up, its outcome answered as if
// on the first request), and the result goes back as a web-action response.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "action_proxy.hpp"
#include "knative/envelope.hpp"
#include "knative/platform.hpp"
#include "knative/web_answer.hpp"

namespace actionloop::knative {

class handler {
public:
    /// A dedicated runtime starts initialising now, on a thread of its own.
    handler(action_proxy& proxy, platform_config config);
    ~handler();
    handler(const handler&) = delete;
    handler& operator=(const handler&) = delete;

    /// One request, to its response (blocking: compiler, action; call it on a worker).
    response handle(const request& req);

private:
    response handle_envelope(const request& req, const ordered_json& envelope);
    /// Runs a classic init; nullopt on success, else the answer of its failure.
    std::optional<response> init_action(const init_fields& fields);
    /// Dedicated: the init from the environment unless done (the start-up one's failure first).
    std::optional<response> init_dedicated();
    /// The classic init itself; init_lock_ held.
    std::optional<response> init_locked(const init_fields& fields);
    response run_action(const request& req, const ordered_json& envelope);

    action_proxy& proxy_;
    platform_config config_;
    std::mutex init_lock_;                     // one init at a time
    std::atomic<bool> initialized_{false};     // a successful init happened
    std::optional<response> startup_failure_;  // dedicated: the start-up init's failure, once
    // The action's own: set by its (one) successful init, read by every run after it.
    bool raw_ = false;
    std::string name_;
    std::thread warm_up_;
};

}  // namespace actionloop::knative
