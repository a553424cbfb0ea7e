// The state of single-entrypoint mode (stem cell or dedicated, initialised or not) and the
// glue to the classic engine: action_proxy::init and run, through answers.cpp's answer_for,
// which turns their failures into the classic status and {"error":…} body.
#include "knative/handler.hpp"

#include <utility>

#include <spdlog/spdlog.h>

#include "http/answers.hpp"
#include "http/http_error.hpp"
#include "logging.hpp"

namespace actionloop::knative {
namespace {

init_fields dedicated_init(const dedicated_action& action) {
    ordered_json init = {{"code", action.code},
                         {"main", action.main},
                         {"binary", action.binary},
                         {"raw", action.raw},
                         {"name", action.name}};
    return translate_init(init);
}

}  // namespace

handler::handler(action_proxy& proxy, platform_config config)
    : proxy_(proxy), config_(std::move(config)) {
    if (!config_.dedicated) return;
    warm_up_ = std::thread([this] {
        std::lock_guard<std::mutex> lock(init_lock_);
        if (initialized_) return;
        try {
            startup_failure_ = init_locked(dedicated_init(*config_.dedicated));
        } catch (const http_error& e) {
            startup_failure_ = error_response(e.status(), e.what());
        }
    });
}

handler::~handler() {
    if (warm_up_.joinable()) warm_up_.join();
}

response handler::handle(const request& req) {
    try {
        if (path_of(req.target) != "/" || !config_.methods.allows(req.method)) {
            return error_response(INTERNAL_ERROR, BAD_REQUEST_TEXT);
        }
        return handle_envelope(req, parse_envelope(req));
    } catch (const http_error& e) {
        return error_response(e.status(), e.what());
    } catch (const std::exception& e) {
        spdlog::error("single entrypoint: {}", e.what());
        return error_response(INTERNAL_ERROR, INTERNAL_TEXT);
    }
}

response handler::handle_envelope(const request& req, const ordered_json& envelope) {
    const auto init = envelope.find("init");
    const bool has_init = init != envelope.end();
    if (config_.dedicated) {
        if (has_init) {
            go_log(DEDICATED_TEXT);
            return error_response(INTERNAL_ERROR, INTERNAL_TEXT);
        }
        if (auto failure = init_dedicated()) return *failure;
        return run_action(req, envelope);
    }
    if (has_init) {
        const init_fields fields = translate_init(*init);  // refusals before anything is done
        if (auto failure = init_action(fields)) return *failure;
        if (envelope.find("activation") == envelope.end()) {
            return classic_response(OK, "{\"ok\":true}");
        }
    }
    if (!initialized_) return error_response(FORBIDDEN, NOT_INITIALIZED_TEXT);
    return run_action(req, envelope);
}

std::optional<response> handler::init_action(const init_fields& fields) {
    std::lock_guard<std::mutex> lock(init_lock_);
    if (initialized_) {
        go_log(REINIT_TEXT);
        return error_response(FORBIDDEN, REINIT_TEXT);
    }
    return init_locked(fields);
}

// The first request of a dedicated runtime answers the start-up init's failure; each later
// one, until an init succeeds, tries again (as a stem cell's next init may).
std::optional<response> handler::init_dedicated() {
    if (initialized_) return std::nullopt;
    std::lock_guard<std::mutex> lock(init_lock_);
    if (initialized_) return std::nullopt;
    if (startup_failure_) return std::exchange(startup_failure_, std::nullopt);
    return init_locked(dedicated_init(*config_.dedicated));
}

std::optional<response> handler::init_locked(const init_fields& fields) {
    const http_answer answer = answer_for(proxy_, route::init, fields.init_body);
    if (answer.status != OK) return classic_response(answer.status, answer.body);
    raw_ = fields.raw;
    name_ = fields.name;
    initialized_ = true;  // after raw_ and name_: a run reads them once it sees this
    return std::nullopt;
}

response handler::run_action(const request& req, const ordered_json& envelope) {
    const std::string body = translate_run(envelope, req, raw_, name_, config_.user);
    const http_answer answer = answer_for(proxy_, route::run, body);
    if (answer.status != OK) return classic_response(answer.status, answer.body);
    return web_response(answer.body, header_value(req, "Access-Control-Request-Headers"));
}

}  // namespace actionloop::knative
