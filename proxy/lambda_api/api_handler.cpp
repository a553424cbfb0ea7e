#include "lambda_api/api_handler.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "lambda_api/answers.hpp"
#include "lambda_api/requests.hpp"

namespace actionloop::lambda_api {
namespace {

constexpr size_t LOGGED_BYTES = 1024;

// A body in a log line: its first LOGGED_BYTES, without a final newline.
std::string_view logged(const std::string& body) {
    std::string_view text = std::string_view(body).substr(0, LOGGED_BYTES);
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    return text;
}

}  // namespace

std::int64_t epoch_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void api_handler::handle(request req, reply_fn reply) {
    const route r = route_of(req.method, req.target);
    spdlog::debug("{} {}", req.method, req.target);
    switch (r.to) {
        case endpoint::next: {
            const broker::ticket parked = rules_.next(std::move(reply), epoch_ms());
            if (parked != 0 && req.watch != nullptr) {
                req.watch->on_gone([this, parked] { rules_.next_gone(parked); });
            }
            break;
        }
        case endpoint::invoke:
            invoke(req, std::move(reply));
            break;
        case endpoint::response:
        case endpoint::error:
            post(req, r.id, r.to == endpoint::error, reply);
            break;
        case endpoint::init_error: {
            const std::string type(
                header_of(req.headers, "Lambda-Runtime-Function-Error-Type").value_or(""));
            spdlog::warn("the runtime reported an init error ({}): {}", type, logged(req.body));
            reply(rules_.init_error(std::move(req.body), type));
            break;
        }
        case endpoint::stats: {
            answer a;
            a.body = stats_json(rules_.stats());
            reply(std::move(a));
            break;
        }
        case endpoint::wrong_method:
            reply(wrong_method_answer(req.method, req.target, r.allowed));
            break;
        case endpoint::not_found:
            reply(not_found_answer(req.target));
            break;
    }
    arm_deadline();
}

void api_handler::invoke(request& req, reply_fn reply) {
    invoke_request invoke;
    try {
        invoke = read_invoke(req.headers, std::move(req.body));
    } catch (const std::invalid_argument& e) {
        reply(bad_client_context_answer(e.what()));
        return;
    }
    const broker::ticket queued = rules_.invoke(std::move(invoke), std::move(reply), epoch_ms());
    if (queued != 0 && req.watch != nullptr) {
        req.watch->on_gone([this, queued] { rules_.invoke_gone(queued); });
    }
}

// A runtime's answer. Its refusals (400, 410) are logged: they tell of a runtime's mistake.
void api_handler::post(request& req, std::string_view id, bool error, const reply_fn& reply) {
    runtime_post p = read_post(id, req.headers, std::move(req.body));
    answer a =
        error ? rules_.fail(std::move(p), epoch_ms()) : rules_.respond(std::move(p), epoch_ms());
    if (a.status >= 400)
        spdlog::warn("{} {}: {} {}", req.method, req.target, a.status, logged(a.body));
    reply(std::move(a));
}

std::optional<answer> api_handler::too_large(std::string_view target, size_t /*limit*/) {
    const route r = route_of("POST", target);
    const bool answer_post = r.to == endpoint::response || r.to == endpoint::error;
    answer a = rules_.too_large(answer_post ? r.id : std::string_view(), epoch_ms());
    spdlog::warn("{}: {} {}", target, a.status, logged(a.body));
    return a;
}

// One timer for every deadline: armed for the earliest one in flight, moved only when a new
// invocation ends sooner (after the clock stepped back); each firing times out what is due
// and arms for the next.
void api_handler::arm_deadline() {
    const std::optional<std::int64_t> next = rules_.earliest_deadline();
    if (!next || (armed_ && *armed_ <= *next)) return;
    armed_ = next;
    timer_.expires_after(std::chrono::milliseconds(std::max<std::int64_t>(0, *next - epoch_ms())));
    timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) on_deadline();
    });
}

void api_handler::on_deadline() {
    armed_.reset();
    rules_.expire(epoch_ms());
    arm_deadline();
}

}  // namespace actionloop::lambda_api
