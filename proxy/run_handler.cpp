// /run: forward one line → read one line → check it → answer (reference A.4), with a
// restart of a dead process, the deadline, and the answer cap.
#include <chrono>
#include <mutex>

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
    std::lock_guard<activation_queue> turn(queue_);
    if (!executor_) throw http_error(INTERNAL_ERROR, "no action defined yet");
    if (executor_->exited()) restart_action();

    http_answer answer;
    auto outcome = executor_->interact(body, deadline_of(body), answer.body);
    write_sentinels();
    switch (outcome) {
        case executor::outcome::answered:
            if (!is_object_or_array(answer.body)) throw http_error(BAD_GATEWAY, NOT_OBJECT);
            return answer;
        case executor::outcome::exited:
            spdlog::debug("the action exited during the run ({})", executor_->describe_exit());
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

// A process that died (crash, deadline, cap) is started again in place: one failure costs
// one activation, not a cold start.
void action_proxy::restart_action() {
    spdlog::warn("the action process is gone ({}); starting it again",
                 executor_->describe_exit());
    try {
        executor_->start();
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
    auto left = milliseconds(*ms) - duration_cast<milliseconds>(
                                        system_clock::now().time_since_epoch());
    if (left.count() <= 0) return executor::clock::time_point::max();
    return executor::clock::now() + left + milliseconds(settings_.deadline_grace_ms);
}

}  // namespace actionloop
