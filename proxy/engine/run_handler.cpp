// /run: the request line goes through the activation engine (engine.hpp), on the event
// loop; its answer line is checked and becomes the HTTP answer (docs/protocol.md, /run), with
// a restart of a dead process, the deadline, and the answer cap.
#include <chrono>
#include <future>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "action_proxy.hpp"
#include "engine/framing.hpp"
#include "http/answers.hpp"
#include "http/http_error.hpp"
#include "logging.hpp"

namespace actionloop {

namespace {

const char* const NOT_OBJECT = "The action did not return a dictionary or array.";

}  // namespace

void action_proxy::run(std::string body, answer_callback done) {
    if (inits_running_ > 0) {  // it runs on the action that /init is starting
        parked_.push_back({std::move(body), std::move(done)});
        return;
    }
    if (!engine_) {
        done(failure_answer("/run", http_error(INTERNAL_ERROR, "no action defined yet")));
        return;
    }
    const auto given = deadline_of(body);
    // No deadline in the request (Knative, a plain HTTP client): OW_RUN_TIMEOUT_MS bounds it.
    const bool bounded_by_setting =
        given == executor::clock::time_point::max() && settings_.run_timeout_ms > 0;
    const auto deadline =
        bounded_by_setting
            ? executor::clock::now() + std::chrono::milliseconds(settings_.run_timeout_ms)
            : given;
    engine_->submit(std::move(body), deadline,
                    [this, bounded_by_setting, done = std::move(done)](activation_result result) {
                        http_answer answer;
                        try {
                            answer = answer_of(std::move(result), bounded_by_setting);
                        } catch (const std::exception& e) {
                            answer = failure_answer("/run", e);
                        }
                        done(std::move(answer));
                    });
}

http_answer action_proxy::run_blocking(std::string body) {
    std::promise<http_answer> answered;
    std::future<http_answer> answer = answered.get_future();
    boost::asio::post(*loop_, [this, &answered, body = std::move(body)]() mutable {
        run(std::move(body), [&answered](http_answer a) { answered.set_value(std::move(a)); });
    });
    return answer.get();
}

// Once the last running /init is done (its action installed, or not), the /runs that waited
// for it go to the action.
void action_proxy::init_finished() {
    if (--inits_running_ > 0) return;
    std::deque<parked_run> waited;
    waited.swap(parked_);
    for (parked_run& r : waited) run(std::move(r.body), std::move(r.done));
}

// One activation's outcome as the /run answer (the /run table of docs/protocol.md).
http_answer action_proxy::answer_of(activation_result result, bool bounded_by_setting) const {
    if (!result.start_failure.empty()) {
        throw http_error(BAD_GATEWAY, "cannot start action: " + result.start_failure);
    }
    switch (result.outcome) {
        case executor::outcome::answered:
            if (!is_object_or_array(result.line)) throw http_error(BAD_GATEWAY, NOT_OBJECT);
            return {OK, std::move(result.line)};
        case executor::outcome::exited:
            // Upstream's text, then the signal when one ended the action (clients match the
            // prefix).
            if (!result.crash.empty()) {
                throw http_error(BAD_REQUEST, "command exited (" + result.crash + ")");
            }
            throw http_error(BAD_REQUEST, "command exited");
        case executor::outcome::deadline:
            if (bounded_by_setting) {
                spdlog::warn("the action ran longer than OW_RUN_TIMEOUT_MS ({} ms); stopped it",
                             settings_.run_timeout_ms);
                throw http_error(BAD_GATEWAY, run_timeout_text() + " and was stopped.");
            }
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

std::string action_proxy::run_timeout_text() const {
    return "The action did not answer within OW_RUN_TIMEOUT_MS (" +
           std::to_string(settings_.run_timeout_ms) + " ms; the request had no deadline)";
}

// /health, on the loop: an activation (answered or not yet written) submitted longer than
// OW_RUN_TIMEOUT_MS ago means the action is not serving: it hangs, or is being stopped and
// started again. Whatever the activation's own deadline.
std::optional<std::string> action_proxy::overrun() const {
    if (settings_.run_timeout_ms <= 0 || !engine_) return std::nullopt;
    const auto oldest = engine_->oldest_submitted();
    if (oldest == executor::clock::time_point::max()) return std::nullopt;
    const auto age = executor::clock::now() - oldest;
    if (age <= std::chrono::milliseconds(settings_.run_timeout_ms)) return std::nullopt;
    return "An activation has been running for " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(age).count()) +
           " ms, longer than OW_RUN_TIMEOUT_MS (" + std::to_string(settings_.run_timeout_ms) +
           " ms): the action is not serving until it answers or is stopped and started again.";
}

// The one owner of the sentinels, called by the engine as each activation ends (before the
// next request of a window of one is written): a pipelining action (our launcher) writes them
// itself after each answer, so the proxy writes them only for an activation the action could not
// finish; for any other action, after every activation. A crash is said before them, so
// it lands in the log of the activation that saw it.
void action_proxy::end_activation(const activation_engine& engine, executor::outcome outcome) {
    const bool sentinels = !engine.pipelined() || outcome != executor::outcome::answered;
    // The activation's stderr lines first, its last line ended (the action's fd 2 is a pipe
    // the proxy forwards: engine/stderr_pipe.hpp).
    if (sentinels) engine.end_stderr_line();
    if (outcome == executor::outcome::exited) {
        spdlog::warn("the action exited during the activation ({})", engine.describe_exit());
    }
    if (sentinels) write_sentinels();
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
