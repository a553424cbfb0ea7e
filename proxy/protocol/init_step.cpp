#include "protocol/init_step.hpp"

#include <spdlog/spdlog.h>

#include "logging.hpp"
#include "protocol/base64.hpp"
#include "protocol/error_answer.hpp"
#include "protocol/init_request.hpp"

namespace actionloop {

namespace {

const char* const REINIT = "Cannot initialize the action more than once.";
const char* const NO_CODE = "Missing main/no code to execute.";
const char* const BUILD_FAILED =
    "The action failed to generate or locate a binary. See logs for details.";
const char* const START_FAILED = "Cannot start action. Check logs for details.";

// Upstream's two ways of reporting an init failure: the raw text in the answer, or (with
// OW_LOG_INIT_ERROR) the text on stderr, the sentinels, and a generic answer.
// With OW_LOG_INIT_ERROR, a failed start's reason is in the answer too, and an action that
// failed to start is quoted: the last lines it wrote to stderr (`stderr_tail`, at most 20
// lines and 4 KiB).
answer failure_of(const settings& config, const init_outcome& outcome) {
    const bool build = outcome.kind == init_outcome::result::build_failed;
    if (!config.log_init_error) {
        return error_answer(BAD_GATEWAY,
                            build ? outcome.error : "cannot start action: " + outcome.error);
    }
    const char* generic = build ? BUILD_FAILED : START_FAILED;
    write_stderr(outcome.error + "\n");
    write_sentinels();
    if (build) return error_answer(BAD_GATEWAY, generic);
    std::string text = std::string(generic) + " (" + outcome.error + ")";  // why it did not start
    if (!outcome.stderr_tail.empty()) {
        text += " The action's last lines on stderr:\n" + outcome.stderr_tail;
    }
    return error_answer(BAD_GATEWAY, text);
}

answer init_locked(action_host& host, const std::string& body) {
    if (host.initialized() && !host.config().debug) {
        go_log(REINIT);
        return error_answer(FORBIDDEN, REINIT);
    }
    init_request request = parse_init_request(body, json_limits_of(host.config()));  // or throws
    if (request.code.empty()) return error_answer(FORBIDDEN, NO_CODE);
    const std::string main = request.main.empty() ? "main" : request.main;
    std::string payload = request.binary ? decode_base64(request.code) : std::move(request.code);
    const init_outcome outcome = host.init(payload, main, request.env);
    if (outcome.kind != init_outcome::result::started) return failure_of(host.config(), outcome);
    answer ok;
    ok.body = "{\"ok\":true}\n";
    return ok;
}

}  // namespace

answer init_step(action_host& host, const std::string& body) {
    const auto turn = host.init_turn();
    return init_step(host, body, turn);
}

answer init_step(action_host& host, const std::string& body,
                 const std::unique_lock<std::mutex>& /*turn*/) {
    try {
        return init_locked(host, body);
    } catch (const refusal& refused) {
        return error_answer(refused.status(), refused.what());
    } catch (const std::exception& e) {
        spdlog::error("/init failed: {}", e.what());
        return error_answer(BAD_GATEWAY, e.what());
    } catch (...) {
        spdlog::error("/init failed");
        return error_answer(INTERNAL_ERROR, "internal error");
    }
}

}  // namespace actionloop
