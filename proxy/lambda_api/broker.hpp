// The local Runtime API's rules, as a state machine with no I/O and no clock of its own (the
// time comes with each call, Unix epoch milliseconds): it pairs invokes with parked
// GET …/invocation/next, hands out request ids and deadlines, takes the runtime's answers
// and times out the invocations that get none. The HTTP adapter (api_handler.hpp) only reads
// requests, calls it and arms a timer for earliest_deadline(); the unit tests drive it
// directly.
//
// The rules, as Lambda's Runtime API and its Runtime Interface Emulator (RIE) have them:
//   - An invoke goes to the /next parked longest; the event's deadline is the moment a /next
//     takes it plus the function's timeout (time spent waiting in the queue is not the
//     function's, as on Lambda).
//   - Classic mode: an invoke with no /next parked waits in a queue (at most max_queued; past
//     it 429) for the next /next; at most max_parked /next park at once (past it 500).
//   - Managed-Instances mode (max_concurrency N > 0): at most N /next park at once, a further
//     one is refused at once (500 Runtime.TooManyIdleRuntimes, as the emulator's invoke
//     router); an invoke with no /next parked fails at once (400 Runtime.Unavailable), never
//     queued.
//   - A runtime's post for an invocation in flight before its deadline is taken (202) and
//     answers the invoker; at or after the deadline it is refused (410) and the invoker gets
//     the timeout; for an id answered already 400; for an id that timed out 410 once, then
//     400; for an id never handed out 400.
//   - With invocation ids on, a post must echo the /next's Lambda-Runtime-Invocation-Id: one
//     echoing another is refused (400), one without is taken; both are counted.
//   - An init error is recorded: invokes waiting, and every invoke until a runtime polls
//     /next again (a new runtime), are answered with it.
// Every reply is called after the state is updated, and at most once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "lambda_api/ids.hpp"
#include "lambda_api/recent_ids.hpp"
#include "lambda_api/requests.hpp"
#include "lambda_api/stats.hpp"
#include "protocol/exchange.hpp"

namespace actionloop::lambda_api {

struct broker_config {
    size_t max_concurrency = 0;        // Managed-Instances mode when > 0 (-max-concurrency)
    size_t max_queued = 1000;          // classic: invokes waiting for a /next (-max-queue)
    size_t max_parked = 1024;          // classic: /next parked at once (-max-parked)
    size_t kept_ids = 10000;           // ids of finished invocations remembered (-keep-ids)
    size_t max_body_bytes = 6u << 20;  // named in the invoker's answer to an oversized response
    std::int64_t timeout_ms = 3000;    // the function's timeout (-timeout)
    bool invocation_ids = false;       // send and check Lambda-Runtime-Invocation-Id
    std::string function_arn;          // Lambda-Runtime-Invoked-Function-Arn
};

class broker {
public:
    /// Which parked /next or queued invoke a client that went away was; 0: none.
    using ticket = std::uint64_t;

    broker(broker_config config, std::uint64_t seed);

    /// A GET …/invocation/next: `reply` gets an invoke's event now (one is queued) or later
    /// (parked: the ticket returned), or a refusal now (past the parked bound).
    ticket next(reply_fn reply, std::int64_t now_ms);
    /// A POST …/invocations: `reply` gets the function's answer once the runtime posts it or
    /// the deadline passes, or a refusal now. Returns the ticket of a queued invoke.
    ticket invoke(invoke_request invoke, reply_fn reply, std::int64_t now_ms);
    /// A runtime's POST …/{id}/response and …/{id}/error: the poster's answer.
    answer respond(runtime_post post, std::int64_t now_ms);
    answer fail(runtime_post post, std::int64_t now_ms);
    /// A runtime's POST …/init/error (`error_type`: its Lambda-Runtime-Function-Error-Type).
    answer init_error(std::string body, std::string_view error_type);
    /// A request body past the bound (413). For a response or error post (`request_id` not
    /// empty) of an invocation in flight, the invoker gets Function.ResponseSizeTooLarge.
    answer too_large(std::string_view request_id, std::int64_t now_ms);

    /// The client of a parked /next, or of a queued invoke, went away: forgotten (its reply
    /// dropped). A ticket already served or unknown is ignored.
    void next_gone(ticket t);
    void invoke_gone(ticket t);

    /// Answers with the timeout every invocation whose deadline is at or before `now_ms`;
    /// returns earliest_deadline().
    std::optional<std::int64_t> expire(std::int64_t now_ms);
    /// The deadline of the invocation in flight that ends first (nullopt: none in flight).
    std::optional<std::int64_t> earliest_deadline() const;
    /// Invocations are with the runtime (the event loop then sleeps rather than polls).
    bool busy() const { return !running_.empty(); }

    api_stats stats() const;

private:
    struct parked_next {
        ticket id;
        reply_fn reply;
    };
    struct queued_invoke {
        ticket id;
        invoke_request invoke;
        reply_fn reply;
    };
    struct in_flight {
        std::string request_id;
        std::string invocation_id;
        std::int64_t deadline_ms;
        reply_fn invoker;
    };
    using running_list = std::list<in_flight>;

    bool managed() const { return config_.max_concurrency > 0; }
    void deliver(const reply_fn& next, invoke_request invoke, reply_fn invoker,
                 std::int64_t now_ms);
    running_list::iterator add_running(in_flight f);
    answer settle(runtime_post post, bool error, std::int64_t now_ms);
    answer refuse_post(std::string_view id);
    void time_out(running_list::iterator it, recent_ids::state remembered);
    void finish(running_list::iterator it, recent_ids::state remembered);

    broker_config config_;
    id_source ids_;
    std::deque<parked_next> parked_;    // oldest first
    std::deque<queued_invoke> queued_;  // oldest first
    running_list running_;              // by deadline, earliest first
    std::unordered_map<std::string_view, running_list::iterator> by_id_;  // keys: running_'s ids
    recent_ids recent_;
    std::optional<std::string> init_error_;  // the invokers' answer body while recorded
    ticket last_ticket_ = 0;
    api_stats stats_;
};

}  // namespace actionloop::lambda_api
