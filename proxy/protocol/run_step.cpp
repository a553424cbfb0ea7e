#include "protocol/run_step.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

#include "engine/framing.hpp"
#include "protocol/error_answer.hpp"

namespace actionloop {

namespace {

using clock = activation_engine::clock;

const char* const NOT_OBJECT = "The action did not return a dictionary or array.";

// The platform's `deadline` (epoch ms, a string) plus a grace period. A deadline that has
// already passed when the request arrives is not the platform's (it would not send one);
// it is ignored.
clock::time_point deadline_of(const settings& config, const std::string& body) {
    using namespace std::chrono;
    auto ms = find_deadline_ms(body);
    if (!ms) return clock::time_point::max();
    auto left =
        milliseconds(*ms) - duration_cast<milliseconds>(system_clock::now().time_since_epoch());
    if (left.count() <= 0) return clock::time_point::max();
    // A deadline centuries away (e.g. "99999999999999") is no deadline: in the clock's
    // nanoseconds it would overflow (UBSan found it through the context test).
    if (left > hours(24 * 365 * 100)) return clock::time_point::max();
    return clock::now() + left + milliseconds(config.deadline_grace_ms);
}

// Which bound stops an activation: the request's deadline, or OW_RUN_TIMEOUT_MS because the
// request had none (`missing`) or a client asked for more (`clamped`).
enum class bound { deadline, missing, clamped };

answer deadline_answer(const settings& config, bound by) {
    if (by == bound::deadline) {
        spdlog::warn("the action missed its deadline; stopped it");
        return error_answer(BAD_GATEWAY,
                            "The action did not answer before its deadline and was stopped.");
    }
    spdlog::warn("the action ran longer than OW_RUN_TIMEOUT_MS ({} ms); stopped it",
                 config.run_timeout_ms);
    const std::string why = by == bound::missing
                                ? "; the request had no deadline"
                                : ", the bound of every request in single-entrypoint mode";
    return error_answer(BAD_GATEWAY, "The action did not answer within OW_RUN_TIMEOUT_MS (" +
                                         std::to_string(config.run_timeout_ms) + " ms" + why +
                                         ") and was stopped.");
}

// One activation's outcome as the /run answer.
answer answer_of(const settings& config, activation_result result, bound by, answer_check check) {
    if (result.no_action) return error_answer(INTERNAL_ERROR, "no action defined yet");
    if (!result.start_failure.empty()) {
        return error_answer(BAD_GATEWAY, "cannot start action: " + result.start_failure);
    }
    switch (result.outcome) {
        case executor::outcome::answered: {
            if (check == answer_check::here && !is_object_or_array(result.line)) {
                return not_object_answer();
            }
            answer ok;
            ok.body = std::move(result.line);
            return ok;
        }
        case executor::outcome::exited:
            // Upstream's text, then the signal when one ended the action (clients match the
            // prefix).
            if (!result.crash.empty()) {
                return error_answer(BAD_REQUEST, "command exited (" + result.crash + ")");
            }
            return error_answer(BAD_REQUEST, "command exited");
        case executor::outcome::deadline:
            return deadline_answer(config, by);
        case executor::outcome::too_large:
            spdlog::warn("the action's answer passed {} bytes; stopped it",
                         config.max_answer_bytes);
            return error_answer(BAD_GATEWAY, "The action's answer exceeds the limit of " +
                                                 std::to_string(config.max_answer_bytes) +
                                                 " bytes.");
    }
    return not_object_answer();
}

}  // namespace

answer not_object_answer() { return error_answer(BAD_GATEWAY, NOT_OBJECT); }

void run_step(action_host& host, std::string body, reply_fn done, answer_check check,
              deadline_source source) {
    const settings& config = host.config();
    auto deadline = deadline_of(config, body);
    bound by = bound::deadline;
    if (config.run_timeout_ms > 0) {
        // No deadline in the request (Knative, a plain HTTP client): OW_RUN_TIMEOUT_MS bounds
        // it. A client's deadline (single-entrypoint mode) never lifts that bound.
        const auto bounded = clock::now() + std::chrono::milliseconds(config.run_timeout_ms);
        if (deadline == clock::time_point::max()) {
            deadline = bounded;
            by = bound::missing;
        } else if (source == deadline_source::client && deadline > bounded) {
            deadline = bounded;
            by = bound::clamped;
        }
    }
    host.run(std::move(body), deadline,
             [&config, by, check, done = std::move(done)](activation_result result) {
                 done(answer_of(config, std::move(result), by, check));
             });
}

}  // namespace actionloop
