#include "lambda_api/broker.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "lambda_api/answers.hpp"

namespace actionloop::lambda_api {
namespace {

// The error body the invokers get when a runtime posted none.
std::string error_body_or(std::string body, std::string_view error_type, std::string_view what) {
    if (!body.empty()) return body;
    return error_json(error_type.empty() ? "Runtime.Unknown" : error_type,
                      "the runtime posted " + std::string(what) + " with an empty body");
}

template <class Queue>
bool erase_ticket(Queue& queue, broker::ticket t) {
    const auto found =
        std::find_if(queue.begin(), queue.end(), [t](const auto& entry) { return entry.id == t; });
    if (found == queue.end()) return false;
    queue.erase(found);
    return true;
}

}  // namespace

broker::broker(broker_config config, std::uint64_t seed)
    : config_(std::move(config)), ids_(seed), recent_(config_.kept_ids) {}

broker::ticket broker::next(reply_fn reply, std::int64_t now_ms) {
    init_error_.reset();  // a runtime polls again: started anew
    if (!queued_.empty()) {
        queued_invoke waiting = std::move(queued_.front());
        queued_.pop_front();
        deliver(reply, std::move(waiting.invoke), std::move(waiting.reply), now_ms);
        return 0;
    }
    const size_t bound = managed() ? config_.max_concurrency : config_.max_parked;
    if (parked_.size() >= bound) {
        ++stats_.refused_next;
        const std::string flag = managed() ? "-max-concurrency" : "-max-parked";
        reply(too_many_next_answer(parked_.size(), flag + " " + std::to_string(bound)));
        return 0;
    }
    const ticket id = ++last_ticket_;
    parked_.push_back(parked_next{id, std::move(reply)});
    stats_.parked_peak = std::max(stats_.parked_peak, parked_.size());
    return id;
}

broker::ticket broker::invoke(invoke_request invoke, reply_fn reply, std::int64_t now_ms) {
    ++stats_.invokes;
    if (init_error_) {
        ++stats_.init_failed_invokes;
        reply(invoke_error(*init_error_, ids_.uuid()));
        return 0;
    }
    if (!parked_.empty()) {
        parked_next runtime = std::move(parked_.front());
        parked_.pop_front();
        deliver(runtime.reply, std::move(invoke), std::move(reply), now_ms);
        return 0;
    }
    if (managed() || queued_.size() >= config_.max_queued) {
        ++stats_.refused_invokes;
        reply(managed() ? no_idle_runtime_answer(config_.max_concurrency)
                        : queue_full_answer(config_.max_queued));
        return 0;
    }
    const ticket id = ++last_ticket_;
    queued_.push_back(queued_invoke{id, std::move(invoke), std::move(reply)});
    stats_.queued_peak = std::max(stats_.queued_peak, queued_.size());
    return id;
}

// The invoke becomes an invocation in flight: a fresh request id (and invocation id), its
// deadline, a trace header when the invoke brought none; then the /next gets its event.
void broker::deliver(const reply_fn& next, invoke_request invoke, reply_fn invoker,
                     std::int64_t now_ms) {
    in_flight f{ids_.uuid(), config_.invocation_ids ? ids_.uuid() : std::string(),
                now_ms + config_.timeout_ms, std::move(invoker)};
    if (invoke.trace_id.empty()) invoke.trace_id = ids_.trace_header(now_ms);
    const auto it = add_running(std::move(f));
    ++stats_.delivered;
    stats_.in_flight_peak = std::max(stats_.in_flight_peak, running_.size());
    next(next_answer(std::move(invoke), delivery{it->request_id, it->deadline_ms,
                                                 config_.function_arn, it->invocation_id}));
}

// In deadline order: every timeout is the same, so a new invocation goes last unless the
// clock stepped back (then it is placed among the later ones, from the end).
broker::running_list::iterator broker::add_running(in_flight f) {
    auto at = running_.end();
    while (at != running_.begin() && std::prev(at)->deadline_ms > f.deadline_ms) --at;
    const auto it = running_.insert(at, std::move(f));
    by_id_.emplace(it->request_id, it);
    return it;
}

answer broker::respond(runtime_post post, std::int64_t now_ms) {
    return settle(std::move(post), false, now_ms);
}

answer broker::fail(runtime_post post, std::int64_t now_ms) {
    return settle(std::move(post), true, now_ms);
}

answer broker::settle(runtime_post post, bool error, std::int64_t now_ms) {
    const auto found = by_id_.find(post.request_id);
    if (found == by_id_.end()) return refuse_post(post.request_id);
    const running_list::iterator it = found->second;
    if (now_ms >= it->deadline_ms) {
        // The timer has not fired yet: the invoker gets its timeout now and this post its
        // 410 (the one a timed-out id gets; a further post is a 400).
        time_out(it, recent_ids::state::answered);
        ++stats_.late_posts;
        return too_late_answer(post.request_id);
    }
    if (config_.invocation_ids) {
        if (!post.invocation_id) {
            ++stats_.echo_missing;
        } else if (*post.invocation_id != it->invocation_id) {
            ++stats_.echo_wrong;
            return wrong_echo_answer(post.request_id, *post.invocation_id, it->invocation_id);
        } else {
            ++stats_.echo_ok;
        }
    }
    reply_fn invoker = std::move(it->invoker);
    finish(it, recent_ids::state::answered);
    ++(error ? stats_.errors : stats_.responses);
    if (invoker) {
        invoker(error
                    ? invoke_error(error_body_or(std::move(post.body), post.error_type, "an error"),
                                   post.request_id)
                    : invoke_result(std::move(post.body), post.request_id));
    }
    return accepted_answer();
}

answer broker::refuse_post(std::string_view id) {
    const auto state = recent_.find(id);
    if (!state) {
        ++stats_.unknown_ids;
        return unknown_id_answer(id);
    }
    if (*state == recent_ids::state::timed_out) {
        recent_.consume(id);
        ++stats_.late_posts;
        return too_late_answer(id);
    }
    ++stats_.repeated_posts;
    return answered_id_answer(id);
}

void broker::time_out(running_list::iterator it, recent_ids::state remembered) {
    reply_fn invoker = std::move(it->invoker);
    const std::string id = it->request_id;
    finish(it, remembered);
    ++stats_.timeouts;
    if (invoker) invoker(invoke_timeout(id, config_.timeout_ms));
}

// The invocation leaves the running ones (its map key views its id: erased first) and its id
// is remembered as `remembered`.
void broker::finish(running_list::iterator it, recent_ids::state remembered) {
    by_id_.erase(it->request_id);
    std::string id = std::move(it->request_id);
    running_.erase(it);
    recent_.remember(std::move(id), remembered);
}

answer broker::init_error(std::string body, std::string_view error_type) {
    ++stats_.init_errors;
    init_error_ = error_body_or(std::move(body), error_type, "an init error");
    std::deque<queued_invoke> waiting;
    waiting.swap(queued_);
    for (queued_invoke& q : waiting) {
        ++stats_.init_failed_invokes;
        q.reply(invoke_error(*init_error_, ids_.uuid()));
    }
    return accepted_answer();
}

answer broker::too_large(std::string_view request_id, std::int64_t now_ms) {
    ++stats_.too_large;
    const auto found = request_id.empty() ? by_id_.end() : by_id_.find(request_id);
    if (found != by_id_.end() && now_ms < found->second->deadline_ms) {
        const running_list::iterator it = found->second;
        reply_fn invoker = std::move(it->invoker);
        const std::string id = it->request_id;
        finish(it, recent_ids::state::answered);
        if (invoker) invoker(invoke_too_large(id, config_.max_body_bytes));
    }
    return body_too_large_answer(config_.max_body_bytes);
}

void broker::next_gone(ticket t) {
    if (erase_ticket(parked_, t)) ++stats_.gone_next;
}

void broker::invoke_gone(ticket t) {
    if (erase_ticket(queued_, t)) ++stats_.gone_invokes;
}

std::optional<std::int64_t> broker::expire(std::int64_t now_ms) {
    while (!running_.empty() && running_.front().deadline_ms <= now_ms) {
        time_out(running_.begin(), recent_ids::state::timed_out);
    }
    return earliest_deadline();
}

std::optional<std::int64_t> broker::earliest_deadline() const {
    if (running_.empty()) return std::nullopt;
    return running_.front().deadline_ms;
}

api_stats broker::stats() const {
    api_stats s = stats_;
    s.parked = parked_.size();
    s.queued = queued_.size();
    s.in_flight = running_.size();
    s.init_failed = init_error_.has_value();
    return s;
}

}  // namespace actionloop::lambda_api
