#include "protocol/health.hpp"

#include <chrono>
#include <string>

#include "protocol/error_answer.hpp"

namespace actionloop {

answer health_answer(bool draining, const action_host& host, const admission_limit* inflight) {
    if (draining) return error_answer(SERVICE_UNAVAILABLE, SHUTTING_DOWN);
    if (inflight != nullptr && inflight->max() != 0 && inflight->count() >= inflight->max()) {
        return saturated_health_answer(inflight->max());
    }
    const long bound_ms = host.config().run_timeout_ms;
    const auto oldest = host.oldest_submitted();
    if (bound_ms > 0 && oldest != activation_engine::clock::time_point::max()) {
        const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(
            activation_engine::clock::now() - oldest);
        if (age.count() > bound_ms) {
            return error_answer(
                SERVICE_UNAVAILABLE,
                "An activation has been running for " + std::to_string(age.count()) +
                    " ms, longer than OW_RUN_TIMEOUT_MS (" + std::to_string(bound_ms) +
                    " ms): the action is not serving until it answers or is stopped and "
                    "started again.");
        }
    }
    answer ok;
    ok.body = "{\"ok\":true}\n";
    return ok;
}

answer shutting_down_answer() {
    answer a = error_answer(SERVICE_UNAVAILABLE, SHUTTING_DOWN);
    a.last = true;
    return a;
}

}  // namespace actionloop
