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

// Bodies and answer lines up to this size are parsed on the loop (tens of microseconds);
// bigger ones on a worker, so that one big request never holds /health and the other
// connections while it is parsed (a 4 MB body takes hundreds of milliseconds, more under a
// sanitizer).
constexpr size_t LOOP_PARSE_BYTES = 64u << 10;

init_fields dedicated_init(const dedicated_action& action) {
    ordered_json init = {{"code", action.code},
                         {"main", action.main},
                         {"binary", action.binary},
                         {"raw", action.raw},
                         {"name", action.name}};
    return translate_init(init);
}

}  // namespace

handler::handler(action_host& host, platform_config config, activation_gate& gate)
    : host_(host), gate_(gate), config_(std::move(config)), queued_(host.config().max_queued) {
    if (!config_.dedicated) return;
    warm_up_ = std::thread([this] {
        const auto turn = host_.init_turn();
        if (host_.initialized()) return;
        try {
            startup_failure_ = init_locked(dedicated_init(*config_.dedicated), turn);
        } catch (const refusal& e) {
            startup_failure_ = error_response(e.status(), e.what());
        }
    });
}

handler::~handler() {
    if (warm_up_.joinable()) warm_up_.join();
}

// On the loop. A run of an initialised action stays on it from the request to the answer (the
// envelope is translated here, the activation goes to the engine on this thread), unless its
// body or answer is bigger than LOOP_PARSE_BYTES: that one is parsed and translated on a
// worker. A request that initialises (a stem cell's `init`, a dedicated runtime's first
// request after a failed start-up init) goes to a worker for that, and comes back for its run.
void handler::handle(actionloop::request in, reply_fn reply) {
    if (route_of(in.target) == route::health) {  // probes do not depend on the platform
        reply(health_answer(gate_.drain.draining(), host_, &gate_.inflight));
        return;
    }
    // Before any work (the body is not parsed): a client cannot queue without bound.
    if (!queued_.try_enter()) {
        gate_.metrics.refused(activation_metrics::refusal_reason::queue);
        reply(queue_full());
        return;
    }
    reply_fn done = admit(in, gate_, true, [this, reply = std::move(reply)](answer a) {
        queued_.leave();  // on the loop, as every answer
        reply(std::move(a));
    });
    if (!done) return;
    auto c = std::make_shared<call>();
    c->req = web_request{std::string(in.method), std::string(in.target), std::move(in.headers),
                         std::move(in.body)};
    c->head = c->req.method == "HEAD";
    c->done = std::move(done);
    if (path_of(c->req.target) != "/" || !config_.methods.allows(c->req.method)) {
        finish(*c, error_response(INTERNAL_ERROR, BAD_REQUEST_TEXT));
        return;
    }
    const bool big = c->req.body.size() > LOOP_PARSE_BYTES;
    then_on_loop(
        std::move(c), big,
        [this](call& r) {
            return guarded([&]() -> std::optional<answer> {
                r.envelope = parse_envelope(r.req, json_limits_of(host_.config()));
                return std::nullopt;
            });
        },
        [this](std::shared_ptr<call> r, std::optional<answer> refused) {
            if (refused) {
                finish(*r, std::move(*refused));
            } else {
                route(std::move(r));
            }
        });
}

// On the loop, the envelope parsed: the run, or the init it needs first (on a worker).
void handler::route(std::shared_ptr<call> c) {
    if (!c->envelope.contains("init") && !(config_.dedicated && !installed())) {
        run_action(c);
        return;
    }
    then_on_loop(
        std::move(c), true,
        [this](call& r) { return guarded([&] { return init_for(r.envelope); }); },
        [this](const std::shared_ptr<call>& r, std::optional<answer> a) {
            if (a) {
                finish(*r, std::move(*a));
            } else {
                run_action(r);
            }
        });
}

// `work(call&)` on a worker when `off_loop` (a big body: parsing it must not hold the loop),
// else here; then `next(call, its result)` on the loop. The call (which holds the session) is
// moved along, never copied: its last reference goes on the loop's thread, where a session
// must end.
template <class Work, class Next>
void handler::then_on_loop(std::shared_ptr<call> c, bool off_loop, Work work, Next next) {
    if (!off_loop) {
        auto result = work(*c);
        next(std::move(c), std::move(result));
        return;
    }
    boost::asio::post(host_.workers(), [this, c = std::move(c), work = std::move(work),
                                        next = std::move(next)]() mutable {
        auto result = work(*c);
        boost::asio::post(host_.loop(), [c = std::move(c), result = std::move(result),
                                         next = std::move(next)]() mutable {
            next(std::move(c), std::move(result));
        });
    });
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
            answer ok;
            ok.body = "{\"ok\":true}";
            return ok;
        }
    }
    return std::nullopt;
}

std::optional<answer> handler::init_action(const init_fields& fields) {
    const auto turn = host_.init_turn();
    if (host_.initialized()) {
        go_log(REINIT_TEXT);
        return error_response(FORBIDDEN, REINIT_TEXT);
    }
    return init_locked(fields, turn);
}

// The first request of a dedicated runtime answers the start-up init's failure; each later
// one, until an init succeeds, tries again (as a stem cell's next init may).
std::optional<answer> handler::init_dedicated() {
    const auto turn = host_.init_turn();
    if (host_.initialized()) return std::nullopt;
    if (startup_failure_) return std::exchange(startup_failure_, std::nullopt);
    return init_locked(dedicated_init(*config_.dedicated), turn);
}

// The host installs a started action on the loop by a task posted before init_step returns, so
// a request whose run comes back to the loop after its init finds the action installed; raw_
// and name_ are written before it (under the turn), so a run that finds it reads them.
std::optional<answer> handler::init_locked(const init_fields& fields,
                                           const std::unique_lock<std::mutex>& turn) {
    raw_ = fields.raw;
    name_ = fields.name;
    const answer init = init_step(host_, fields.init_body, turn);
    if (init.status != OK) return classic_response(init);
    return std::nullopt;
}

bool handler::installed() const { return !host_.worker_states().empty(); }

// On the loop: the run, its answer as a web response.
void handler::run_action(const std::shared_ptr<call>& c) {
    if (!installed()) {
        finish(*c, error_response(FORBIDDEN, NOT_INITIALIZED_TEXT));
        return;
    }
    then_on_loop(
        c, c->req.body.size() > LOOP_PARSE_BYTES,
        [this, raw = raw_, name = &name_](call& r) {
            // name_ changes only in an init, and no init runs while an action is runnable.
            std::string body;
            std::optional<answer> refused = guarded([&]() -> std::optional<answer> {
                body = translate_run(r.envelope, r.req, raw, *name, config_.user);
                return std::nullopt;
            });
            return std::make_pair(std::move(body), std::move(refused));
        },
        [this](std::shared_ptr<call> r, std::pair<std::string, std::optional<answer>> line) {
            if (line.second) {
                finish(*r, std::move(*line.second));
            } else {
                start_run(std::move(r), std::move(line.first));
            }
        });
}

// On the loop: the activation, then its answer line as a web response (parsed on a worker
// when it is big).
void handler::start_run(std::shared_ptr<call> c, std::string body) {
    run_step(
        host_, std::move(body),
        [this, c = std::move(c)](const answer& run) {
            if (run.status != OK) {
                finish(*c, classic_response(run));
                return;
            }
            if (run.body.size() <= LOOP_PARSE_BYTES) {
                finish(*c, web_answer_of(*c, run));
                return;
            }
            then_on_loop(
                c, true, [this, run](call& r) { return web_answer_of(r, run); },
                [this](const std::shared_ptr<call>& r, answer a) { finish(*r, std::move(a)); });
        },
        answer_check::by_caller,   // web_response parses the line: one pass, not two
        deadline_source::client);  // any client's: OW_RUN_TIMEOUT_MS stays the bound
}

// The run's line as a web response, with the run's outcome (run_step read it from the line)
// unless the line cannot be one (an action error).
answer handler::web_answer_of(const call& c, const answer& run) const {
    answer web = web_response(run.body, header_value(c.req, "Access-Control-Request-Headers"),
                              json_limits_of(host_.config()));
    if (web.outcome == activation_outcome::success) web.outcome = run.outcome;
    return web;
}

}  // namespace actionloop::knative
