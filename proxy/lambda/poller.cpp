#include "lambda/poller.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include <spdlog/spdlog.h>

namespace actionloop::lambda {
namespace {

using boost::system::error_code;
using clock = activation_engine::clock;

constexpr auto FIRST_BACKOFF = std::chrono::milliseconds(100);
constexpr auto MAX_BACKOFF = std::chrono::seconds(1);
constexpr std::size_t LOGGED_BODY_BYTES = 512;

long long epoch_ms_now() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string header(const response& res, std::string_view name) {
    auto it = res.find(boost::beast::string_view(name.data(), name.size()));
    return it == res.end() ? std::string() : std::string(it->value());
}

invocation invocation_of(response& res) {
    invocation inv;
    inv.request_id = header(res, "Lambda-Runtime-Aws-Request-Id");
    inv.deadline_ms = header(res, "Lambda-Runtime-Deadline-Ms");
    inv.function_arn = header(res, "Lambda-Runtime-Invoked-Function-Arn");
    inv.trace_id = header(res, "Lambda-Runtime-Trace-Id");
    inv.client_context = header(res, "Lambda-Runtime-Client-Context");
    inv.cognito_identity = header(res, "Lambda-Runtime-Cognito-Identity");
    inv.invocation_id = header(res, "Lambda-Runtime-Invocation-Id");
    inv.event = std::move(res.body());
    return inv;
}

std::string cut(const std::string& text) {
    return text.size() <= LOGGED_BODY_BYTES ? text : text.substr(0, LOGGED_BODY_BYTES) + "…";
}

}  // namespace

poller::poller(action_host& host, drain_state& drain, const api_address& api, unsigned index)
    : host_(host),
      drain_(drain),
      api_(api),
      connection_(host.loop(), api.endpoint, api.host, host.config().max_body_bytes),
      backoff_(host.loop()),
      name_(host.config().lambda_concurrency > 1 ? "poller " + std::to_string(index) + ": " : "") {}

void poller::poll() {
    if (drain_.draining()) return;  // SIGTERM: what is in flight finishes, nothing new
    connection_.get(std::string(NEXT_PATH),
                    [self = shared_from_this()](const error_code& ec, response& res) {
                        self->on_next(ec, res);
                    });
}

void poller::on_next(const error_code& ec, response& res) {
    if (ec || res.result_int() != 200) {
        ++failures_;
        if (ec) {
            spdlog::warn("{}GET {} failed: {}", name_, NEXT_PATH, ec.message());
        } else {
            spdlog::warn("{}GET {} answered {}: {}", name_, NEXT_PATH, res.result_int(),
                         cut(res.body()));
        }
        return after_failure();
    }
    failures_ = 0;
    serve(invocation_of(res));
}

// A failed poll is tried again after a pause that doubles up to a second: a Runtime API that
// restarts (the local one) is found again, and a broken one is not hammered.
void poller::after_failure() {
    auto pause = FIRST_BACKOFF * (1u << std::min(failures_ - 1, 4u));
    backoff_.expires_after(std::min<std::chrono::milliseconds>(pause, MAX_BACKOFF));
    backoff_.async_wait([self = shared_from_this()](const error_code& ec) {
        if (!ec) self->poll();
    });
}

void poller::serve(invocation inv) {
    if (!usable_request_id(inv.request_id)) {
        spdlog::error("{}an invocation without a usable Lambda-Runtime-Aws-Request-Id ('{}'): "
                      "it cannot be answered; skipped",
                      name_, cut(inv.request_id));
        return poll();
    }
    if (!drain_.enter()) {
        send(error_post(
                 inv, "Runtime.ShuttingDown",
                 "RequestId: " + inv.request_id + " Error: the runtime is shutting down (SIGTERM)"),
             inv.invocation_id, false);
        return;
    }
    ticket_.emplace(drain_);
    const settings& config = host_.config();
    if (auto problem = event_problem(inv.event, json_limits_of(config))) {
        return send(error_post(inv, "Runtime.InvalidEvent",
                               "RequestId: " + inv.request_id + " Error: " + *problem),
                    inv.invocation_id, false);
    }
    // The invocation's deadline (plus OW_DEADLINE_GRACE_MS, 0 unless set in Lambda mode:
    // Lambda itself stops the sandbox there) is the engine's; one that is missing or already
    // past gets OW_RUN_TIMEOUT_MS, as a request without one does.
    const long long now_ms = epoch_ms_now();
    const auto deadline = deadline_of(inv);
    auto stop = clock::time_point::max();
    long long told_ms = 0;
    if (deadline && *deadline > now_ms) {
        stop = clock::now() + std::chrono::milliseconds(*deadline - now_ms) +
               std::chrono::milliseconds(config.deadline_grace_ms);
        told_ms = *deadline;
    } else if (config.run_timeout_ms > 0) {
        stop = clock::now() + std::chrono::milliseconds(config.run_timeout_ms);
        told_ms = now_ms + config.run_timeout_ms;
    }
    std::string line = request_line(inv);
    host_.run(
        std::move(line), stop,
        [self = shared_from_this(), inv = std::move(inv)](const activation_result& result) {
            const post p = result_post(inv, result, self->host_.config().max_answer_bytes);
            self->send(p, inv.invocation_id, !result.line.empty());
        },
        told_ms);
}

// Posts the result, and (unless the proxy is draining) the next `/next` in the same write;
// whatever the Runtime API answers to the post, the loop goes on (a 410 for an answer past the
// deadline, a 400 for an id it forgot: logged, never fatal).
void poller::send(const post& p, const std::string& invocation_id, bool retry_too_large) {
    header_list headers;
    if (!p.error_type.empty()) {
        headers.emplace_back("Lambda-Runtime-Function-Error-Type", p.error_type);
    }
    if (!invocation_id.empty()) headers.emplace_back("Lambda-Runtime-Invocation-Id", invocation_id);
    const bool response_post = p.error_type.empty();
    const bool next = !drain_.draining();
    auto self = shared_from_this();
    connection_.post(
        p.target, p.body, headers,
        [self, target = p.target, invocation_id, response_post, retry_too_large](
            const error_code& ec, response& res) {
            self->ticket_.reset();
            if (ec) {
                spdlog::warn("{}POST {} failed: {}", self->name_, target, ec.message());
            } else if (res.result_int() == 413 && response_post && retry_too_large) {
                self->too_large(target, invocation_id);
            } else if (res.result_int() / 100 != 2) {
                spdlog::warn("{}POST {} answered {}: {}", self->name_, target, res.result_int(),
                             cut(res.body()));
            }
        },
        next ? std::string(NEXT_PATH) : std::string(),
        [self](const error_code& ec, response& res) { self->on_next(ec, res); });
}

// Lambda's own bound on a response (6 MB) refused it: the invocation still gets an answer,
// an error posted on a connection of its own (this one has the next `/next` parked).
void poller::too_large(const std::string& target, const std::string& invocation_id) {
    spdlog::warn("{}POST {} answered 413: the response is too large for the Runtime API; "
                 "posting an error instead",
                 name_, target);
    const std::string path = target.substr(0, target.size() - std::string_view("/response").size());
    invocation inv;
    inv.request_id = path.substr(path.rfind('/') + 1);
    const post error = error_post(inv, "Function.ResponseSizeTooLarge",
                                  "RequestId: " + inv.request_id +
                                      " Error: the response exceeds the Runtime API's limit (413)");
    header_list headers = {{"Lambda-Runtime-Function-Error-Type", error.error_type}};
    if (!invocation_id.empty()) headers.emplace_back("Lambda-Runtime-Invocation-Id", invocation_id);
    side_.emplace(host_.loop(), api_.endpoint, api_.host, 1u << 20);
    side_->post(
        error.target, error.body, headers,
        [self = shared_from_this(), target = error.target](const error_code& ec, response& res) {
            if (ec || res.result_int() / 100 != 2) {
                spdlog::warn("{}POST {} failed: {}", self->name_, target,
                             ec ? ec.message() : std::to_string(res.result_int()));
            }
            self->side_->close();
        });
}

}  // namespace actionloop::lambda
