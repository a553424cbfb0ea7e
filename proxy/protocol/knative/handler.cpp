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
    : host_(host),
      drain_(drain),
      metrics_(metrics),
      config_(std::move(config)),
      queued_(host.config().max_queued) {
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

// On the loop. A run of an initialised action stays on it from the request to the answer (the
// envelope is translated here, the activation goes to the engine on this thread); only a
// request that initialises (a stem cell's `init`, a dedicated runtime's first request after a
// failed start-up init) goes to a worker for that, and comes back for its run.
void handler::handle(actionloop::request in, reply_fn reply) {
    if (route_of(in.target) == route::health) {  // probes do not depend on the platform
        reply(health_answer(drain_.draining(), host_));
        return;
    }
    // Before any work (the body is not parsed): a client cannot queue without bound.
    if (!queued_.try_enter()) {
        metrics_.refused(activation_metrics::refusal_reason::queue);
        reply(queue_full());
        return;
    }
    reply_fn done = admit(in, drain_, metrics_, true, [this, reply = std::move(reply)](answer a) {
        queued_.leave();  // on the loop, as every answer
        reply(std::move(a));
    });
    if (!done) return;
    auto c = std::make_shared<call>();
    c->req = web_request{std::string(in.method), std::string(in.target), std::move(in.headers),
                         std::move(in.body)};
    c->head = c->req.method == "HEAD";
    c->done = std::move(done);
    bool needs_init = false;
    std::optional<answer> refused = guarded([&]() -> std::optional<answer> {
        if (path_of(c->req.target) != "/" || !config_.methods.allows(c->req.method)) {
            return error_response(INTERNAL_ERROR, BAD_REQUEST_TEXT);
        }
        c->envelope = parse_envelope(c->req, json_limits_of(host_.config()));
        needs_init = c->envelope.contains("init") || (config_.dedicated && !runnable_);
        return std::nullopt;
    });
    if (refused) {
        finish(*c, std::move(*refused));
    } else if (!needs_init) {
        run_action(c);
    } else {
        // The request (which holds the session) is moved along, never copied: its last
        // reference goes on the loop's thread, where a session must end.
        boost::asio::post(host_.workers(), [this, c = std::move(c)]() mutable {
            std::optional<answer> a = guarded([&] { return init_for(c->envelope); });
            boost::asio::post(host_.loop(), [this, c = std::move(c), a = std::move(a)]() mutable {
                if (a) {
                    finish(*c, std::move(*a));
                } else {
                    run_action(c);
                }
            });
        });
    }
}

// The step's refusals as their answers, any other failure as the mode's internal error.
template <class Step>
std::optional<answer> handler::guarded(Step&& step) {
    try {
        return step();
    } catch (const refusal& e) {
        return error_response(e.status(), e.what());
    } catch (const std::exception& e) {
        spdlog::error("single entrypoint: {}", e.what());
        return error_response(INTERNAL_ERROR, INTERNAL_TEXT);
    }
}

answer handler::queue_full() const {
    answer a = error_response(SERVICE_UNAVAILABLE, queue_full_text(queued_.max()));
    a.headers.emplace_back("Retry-After", RETRY_AFTER_SECONDS);
    return a;
}

void handler::finish(call& c, answer a) {
    a.head = c.head;
    c.done(std::move(a));
}

// On a worker: the init a request asks for, or needs. Its answer when the request ends here
// (a failure, an init without an activation); nullopt when its run comes next.
std::optional<answer> handler::init_for(const ordered_json& envelope) {
    const auto init = envelope.find("init");
    const bool has_init = init != envelope.end();
    if (config_.dedicated) {
        if (has_init) {
            go_log(DEDICATED_TEXT);
            return error_response(INTERNAL_ERROR, INTERNAL_TEXT);
        }
        return init_dedicated();
    }
    if (has_init) {
        const init_fields fields = translate_init(*init);  // refusals before anything is done
        if (auto failure = init_action(fields)) return failure;
        if (envelope.find("activation") == envelope.end()) {
            return classic_response(OK, "{\"ok\":true}");
        }
    }
    return std::nullopt;
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
    initialized_ = true;
    // The host installs the started action on the loop by a task it has already posted; this
    // one follows it, so a run that sees runnable_ finds the action (and raw_ and name_).
    boost::asio::post(host_.loop(), [this] { runnable_ = true; });
    return std::nullopt;
}

// On the loop: the run, its answer as a web response.
void handler::run_action(const std::shared_ptr<call>& c) {
    if (!runnable_) {
        finish(*c, error_response(FORBIDDEN, NOT_INITIALIZED_TEXT));
        return;
    }
    std::string body;
    if (auto refused = guarded([&]() -> std::optional<answer> {
            body = translate_run(c->envelope, c->req, raw_, name_, config_.user);
            return std::nullopt;
        })) {
        finish(*c, std::move(*refused));
        return;
    }
    run_step(
        host_, std::move(body),
        [this, c](const answer& run) {
            if (run.status != OK) {
                finish(*c, classic_response(run.status, run.body));
                return;
            }
            finish(*c,
                   web_response(run.body, header_value(c->req, "Access-Control-Request-Headers"),
                                json_limits_of(host_.config())));
        },
        answer_check::by_caller,   // web_response parses the line: one pass, not two
        deadline_source::client);  // any client's: OW_RUN_TIMEOUT_MS stays the bound
}

}  // namespace actionloop::knative
