// The state of single-entrypoint mode (stem cell or dedicated, initialised or not) and the
// glue to the classic steps: init_step and run_step, whose failures come back as the classic
// status and {"error":…} body.
#include "protocol/knative/handler.hpp"

#include <utility>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "logging.hpp"
#include "protocol/error_answer.hpp"
#include "protocol/health.hpp"
#include "protocol/init_step.hpp"
#include "protocol/router.hpp"
#include "protocol/run_step.hpp"

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

handler::handler(action_host& host, platform_config config, drain_state& drain,
                 activation_metrics& metrics)
    : host_(host), drain_(drain), metrics_(metrics), config_(std::move(config)) {
    if (!config_.dedicated) return;
    warm_up_ = std::thread([this] {
        std::lock_guard<std::mutex> lock(init_lock_);
        if (initialized_) return;
        try {
            startup_failure_ = init_locked(dedicated_init(*config_.dedicated));
        } catch (const refusal& e) {
            startup_failure_ = error_response(e.status(), e.what());
        }
    });
}

handler::~handler() {
    if (warm_up_.joinable()) warm_up_.join();
}

void handler::handle(actionloop::request req, reply_fn reply) {
    if (route_of(req.target) == route::health) {  // probes do not depend on the platform
        reply(health_answer(drain_.draining(), host_));
        return;
    }
    reply_fn done = admit(req, drain_, metrics_, true, std::move(reply));
    if (!done) return;
    web_request copy{std::string(req.method), std::string(req.target), std::move(req.headers),
                     std::move(req.body)};
    boost::asio::post(
        host_.workers(), [this, req = std::move(copy), done = std::move(done)]() mutable {
            answer a = respond(req);
            a.head = req.method == "HEAD";
            boost::asio::post(host_.loop(), [a = std::move(a), done = std::move(done)]() mutable {
                done(std::move(a));
            });
        });
}

answer handler::respond(const web_request& req) {
    try {
        if (path_of(req.target) != "/" || !config_.methods.allows(req.method)) {
            return error_response(INTERNAL_ERROR, BAD_REQUEST_TEXT);
        }
        return respond_envelope(req, parse_envelope(req));
    } catch (const refusal& e) {
        return error_response(e.status(), e.what());
    } catch (const std::exception& e) {
        spdlog::error("single entrypoint: {}", e.what());
        return error_response(INTERNAL_ERROR, INTERNAL_TEXT);
    }
}

answer handler::respond_envelope(const web_request& req, const ordered_json& envelope) {
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

std::optional<answer> handler::init_action(const init_fields& fields) {
    std::lock_guard<std::mutex> lock(init_lock_);
    if (initialized_) {
        go_log(REINIT_TEXT);
        return error_response(FORBIDDEN, REINIT_TEXT);
    }
    return init_locked(fields);
}

// The first request of a dedicated runtime answers the start-up init's failure; each later
// one, until an init succeeds, tries again (as a stem cell's next init may).
std::optional<answer> handler::init_dedicated() {
    if (initialized_) return std::nullopt;
    std::lock_guard<std::mutex> lock(init_lock_);
    if (initialized_) return std::nullopt;
    if (startup_failure_) return std::exchange(startup_failure_, std::nullopt);
    return init_locked(dedicated_init(*config_.dedicated));
}

std::optional<answer> handler::init_locked(const init_fields& fields) {
    const answer init = init_step(host_, fields.init_body);
    if (init.status != OK) return classic_response(init.status, init.body);
    raw_ = fields.raw;
    name_ = fields.name;
    initialized_ = true;  // after raw_ and name_: a run reads them once it sees this
    return std::nullopt;
}

answer handler::run_action(const web_request& req, const ordered_json& envelope) {
    const std::string body = translate_run(envelope, req, raw_, name_, config_.user);
    const answer run = run_step_blocking(host_, body);
    if (run.status != OK) return classic_response(run.status, run.body);
    return web_response(run.body, header_value(req, "Access-Control-Request-Headers"));
}

}  // namespace actionloop::knative
