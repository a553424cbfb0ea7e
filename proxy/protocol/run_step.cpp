#include "protocol/run_step.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

#include <actionloop/detail/json_scan.hpp>

#include "engine/framing.hpp"
#include "protocol/error_answer.hpp"

namespace actionloop {

namespace {

using clock = activation_engine::clock;

const char* const NOT_OBJECT = "The action did not return a dictionary or array.";

using bound = run_bound;

struct run_limit {
    clock::time_point stop = clock::time_point::max();  // when the proxy stops the action
    bound by = bound::none;
    long long told_ms = 0;  // the deadline the action is told (epoch ms); 0: none
};

long long epoch_ms_now() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// What the request's `deadline` (epoch ms, a string) is, and with `left` its time left.
bound read_deadline(const std::string& body, std::chrono::milliseconds& left) {
    using namespace std::chrono;
    const auto text = find_top_level_field(body, "deadline");  // one pass over the body
    if (!text) return bound::missing;
    const auto ms = deadline_ms_of(*text);
    if (!ms) return bound::unusable;
    left = milliseconds(*ms - epoch_ms_now());
    if (left.count() <= 0) return bound::passed;
    // A deadline centuries away (e.g. "99999999999999") is no time: in the clock's
    // nanoseconds it would overflow (UBSan found it through the context test).
    if (left > hours(24 * 365 * 100)) return bound::unusable;
    return bound::deadline;
}

// The platform's deadline plus OW_DEADLINE_GRACE_MS; OW_RUN_TIMEOUT_MS from now without a
// usable one, or for a client's that would be later (single-entrypoint mode).
run_limit bound_of(const settings& config, const std::string& body, deadline_source source) {
    using std::chrono::milliseconds;
    milliseconds left{0};
    const bound read = read_deadline(body, left);
    const auto now = clock::now();
    const long long epoch_now = epoch_ms_now();
    const milliseconds cap(config.run_timeout_ms);
    const run_limit capped{now + cap, read, epoch_now + cap.count()};
    if (read == bound::deadline) {
        const milliseconds with_grace = left + milliseconds(config.deadline_grace_ms);
        if (source == deadline_source::client && cap.count() > 0 && with_grace > cap) {
            return {capped.stop, bound::clamped, capped.told_ms};
        }
        return {now + with_grace, bound::deadline, epoch_now + left.count()};
    }
    if (cap.count() <= 0) return {};
    return capped;
}

const char* why_run_timeout(bound by) {
    switch (by) {
        case bound::missing:
            return "; the request had no deadline";
        case bound::passed:
            return "; the request's deadline had already passed";
        case bound::unusable:
            return "; the request's deadline was not a usable time";
        default:
            return ", the bound of every request in single-entrypoint mode";
    }
}

answer deadline_answer(const settings& config, bound by) {
    if (by == bound::deadline) {
        spdlog::warn("the action missed its deadline; stopped it");
        return error_answer(BAD_GATEWAY,
                            "The action did not answer before its deadline and was stopped.");
    }
    spdlog::warn("the action ran longer than OW_RUN_TIMEOUT_MS ({} ms); stopped it",
                 config.run_timeout_ms);
    return error_answer(BAD_GATEWAY, "The action did not answer within OW_RUN_TIMEOUT_MS (" +
                                         std::to_string(config.run_timeout_ms) + " ms" +
                                         why_run_timeout(by) + ") and was stopped.");
}

// The action's line as the answer: a success, or an application error.
answer line_answer(std::string line) {
    answer ok;
    ok.outcome = has_top_level_error(line) ? activation_outcome::application_error
                                           : activation_outcome::success;
    ok.body = std::move(line);
    return ok;
}

// Upstream's text, then the signal when one ended the action (clients match the prefix).
answer crash_answer(const std::string& crash) {
    answer a = error_answer(BAD_REQUEST,
                            crash.empty() ? "command exited" : "command exited (" + crash + ")");
    a.outcome = activation_outcome::crash;
    return a;
}

}  // namespace

bool has_top_level_error(std::string_view line) {
    if (line.find("\"error\"") == std::string_view::npos) return false;
    return scan::find_member(line, "error").has_value();
}

answer run_answer(const settings& config, activation_result result, bound by, answer_check check) {
    if (result.no_action) return error_answer(INTERNAL_ERROR, "no action defined yet");
    if (!result.start_failure.empty()) {
        return error_answer(BAD_GATEWAY, "cannot start action: " + result.start_failure);
    }
    switch (result.outcome) {
        case executor::outcome::answered: {
            if (check == answer_check::here && !is_object_or_array(result.line)) {
                return not_object_answer();
            }
            return line_answer(std::move(result.line));
        }
        case executor::outcome::exited:
            return crash_answer(result.crash);
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

answer not_object_answer() { return error_answer(BAD_GATEWAY, NOT_OBJECT); }

void run_step(action_host& host, std::string body, reply_fn done, answer_check check,
              deadline_source source) {
    const settings& config = host.config();
    const run_limit limit = bound_of(config, body, source);
    host.run(
        std::move(body), limit.stop,
        [&config, by = limit.by, check, done = std::move(done)](activation_result result) {
            done(run_answer(config, std::move(result), by, check));
        },
        limit.told_ms);
}

}  // namespace actionloop
