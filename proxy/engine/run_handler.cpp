// /run: the request line goes through the activation engine (engine.hpp), its answer line is
// checked and becomes the HTTP answer (docs/protocol.md, /run), with a restart of a dead
// process, the deadline, and the answer cap.
#include <chrono>
#include <shared_mutex>

#include <spdlog/spdlog.h>

#include "action_proxy.hpp"
#include "framing.hpp"
#include "http_error.hpp"
#include "logging.hpp"

namespace actionloop {

namespace {

const char* const NOT_OBJECT = "The action did not return a dictionary or array.";

}  // namespace

http_answer action_proxy::run(const std::string& body) {
    std::shared_lock<std::shared_mutex> action(action_lock_);
    if (!executor_) throw http_error(INTERNAL_ERROR, "no action defined yet");
    const auto deadline = deadline_of(body);
    http_answer answer;
    auto outcome = engine_->run(body, deadline, answer.body);  // end_activation: by the engine
    return answer_of(outcome, std::move(answer));
}

// One activation's outcome as the /run answer (the /run table of docs/protocol.md).
http_answer action_proxy::answer_of(executor::outcome outcome, http_answer answer) {
    switch (outcome) {
        case executor::outcome::answered:
            if (!is_object_or_array(answer.body)) throw http_error(BAD_GATEWAY, NOT_OBJECT);
            return answer;
        case executor::outcome::exited:
            throw http_error(BAD_REQUEST, "command exited");
        case executor::outcome::deadline:
            spdlog::warn("the action missed its deadline; stopped it");
            throw http_error(BAD_GATEWAY,
                             "The action did not answer before its deadline and was stopped.");
        case executor::outcome::too_large:
            spdlog::warn("the action's answer passed {} bytes; stopped it",
                         settings_.max_answer_bytes);
            throw http_error(BAD_GATEWAY, "The action's answer exceeds the limit of " +
                                              std::to_string(settings_.max_answer_bytes) +
                                              " bytes.");
    }
    throw http_error(BAD_GATEWAY, NOT_OBJECT);
}

// The one owner of the sentinels, called by the engine as each activation ends (before the
// next request of a window of one is written): a pipelining action (our launcher) writes them
// itself after each answer, so the proxy writes them only for an activation the action could not
// finish; for any other action, after every activation. A crash is said before them, so
// it lands in the log of the activation that saw it.
void action_proxy::end_activation(executor::outcome outcome) {
    if (outcome == executor::outcome::exited) {
        spdlog::warn("the action exited during the activation ({})", executor_->describe_exit());
    }
    if (!engine_->pipelined() || outcome != executor::outcome::answered) write_sentinels();
}

// A process that died (crash, deadline, cap) is started again in place: one failure costs
// one activation, not a cold start.
void action_proxy::restart_action() {
    try {
        executor_->restart("the action process is gone (" + executor_->describe_exit() + ")");
        restarts_.fetch_add(1, std::memory_order_relaxed);  // for /metrics
    } catch (const start_error& e) {
        throw http_error(BAD_GATEWAY, std::string("cannot start action: ") + e.what());
    }
}

// The platform's `deadline` (epoch ms, a string) plus a grace period. A deadline that has
// already passed when the request arrives is not the platform's (it would not send one);
// it is ignored.
executor::clock::time_point action_proxy::deadline_of(const std::string& body) const {
    using namespace std::chrono;
    auto ms = find_deadline_ms(body);
    if (!ms) return executor::clock::time_point::max();
    auto left =
        milliseconds(*ms) - duration_cast<milliseconds>(system_clock::now().time_since_epoch());
    if (left.count() <= 0) return executor::clock::time_point::max();
    // A deadline centuries away (e.g. "99999999999999") is no deadline: in the clock's
    // nanoseconds it would overflow (UBSan found it through the context test).
    if (left > hours(24 * 365 * 100)) return executor::clock::time_point::max();
    return executor::clock::now() + left + milliseconds(settings_.deadline_grace_ms);
}

}  // namespace actionloop
