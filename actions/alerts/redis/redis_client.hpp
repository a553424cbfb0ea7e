// redis_client.hpp — one hiredis connection with pipelining: queue commands with append(),
// then read their replies in order with reply(). Any failure (cannot connect, time-out, a
// broken connection, an error reply) throws redis_error and drops the connection; the next
// append() connects again. A nil element of an array reply (MGET) is a null pointer.
// Time: between start_deadline() and clear_deadline() (one activation), connecting, sending
// and every wait for a reply share one budget of `timeout` (ALERT_REDIS_TIMEOUT_MS), however
// many round trips it takes; outside them each connect or reply gets the whole `timeout`.
// Running out throws redis_timeout, whose message says "timed out".
// With sentinels (redis_url::sentinels), connecting first asks them, in order (the last one
// that answered first), for the primary's address (SENTINEL get-master-addr-by-name), then
// checks with ROLE that it is the primary; a failure names every sentinel tried and what each
// answered. What a failover causes (a broken connection, a time-out, a READONLY, LOADING or
// MASTERDOWN answer, a primary that is no longer one) throws redis_unavailable: asking the
// sentinels again may help.
#pragma once

#include <hiredis.h>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/redis_url.hpp"

namespace alerts {

class redis_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The connection failed, or Redis answered that it is not (or not yet) the writable primary:
/// after a failover, another connection may succeed.
class redis_unavailable : public redis_error {
public:
    using redis_error::redis_error;
};

/// The time budget ran out (Redis did not answer in time): no point in trying again at once
/// on the same server.
class redis_timeout : public redis_unavailable {
public:
    using redis_unavailable::redis_unavailable;
};

struct reply_deleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using redis_reply = std::unique_ptr<redisReply, reply_deleter>;

class redis_client {
public:
    redis_client(redis_url url, std::chrono::milliseconds timeout);
    ~redis_client();
    redis_client(const redis_client&) = delete;
    redis_client& operator=(const redis_client&) = delete;

    /// Queues one command (connecting first when there is no connection).
    void append(const std::vector<std::string_view>& args);
    /// Queues one command already in the protocol's form (RESP: "*<n>\r\n$<len>\r\n<arg>\r\n"
    /// ...), given in consecutive pieces: no argv to build or format.
    void append_resp(std::initializer_list<std::string_view> pieces);
    /// The reply of the oldest queued command; throws on an error reply too.
    redis_reply reply();
    /// The same, but an error reply is returned (the connection kept): for the last command
    /// queued, when the caller knows what to do with an error (NOSCRIPT).
    redis_reply reply_or_error();
    /// Sends the queued commands now, without reading a reply (reply() reads them later).
    void send_queued();
    /// The connection's socket (-1 without one): a caller waiting on several things at once
    /// polls it and calls reply() once it is readable.
    int fd() const { return ctx_ ? ctx_->fd : -1; }
    /// Sends the queued commands and reads their replies: one round trip.
    std::vector<redis_reply> replies(std::size_t n);
    /// From now on, everything shares one budget of `timeout` (one activation's I/O).
    void start_deadline() { deadline_ = std::chrono::steady_clock::now() + timeout_; }
    /// The same, ending at `until`.
    void start_deadline(std::chrono::steady_clock::time_point until) { deadline_ = until; }
    void clear_deadline() { deadline_.reset(); }
    /// The budget's end, if one is set.
    std::optional<std::chrono::steady_clock::time_point> deadline() const { return deadline_; }
    /// Throws for an error reply (its text): redis_unavailable for READONLY, LOADING and
    /// MASTERDOWN (a failover under way), else redis_error; drops the connection.
    [[noreturn]] void error_reply(std::string_view text);
    /// Whatever the log lines call the server: the URL, or the sentinels' primary and its
    /// address once known.
    const std::string& label() const { return label_; }
    /// Drops the connection (after a failure), so the next command reconnects.
    void disconnect();

    bool connected() const { return ctx_ != nullptr; }
    /// Connects now when there is no connection.
    void ensure_connected() {
        if (!ctx_) connect();
    }
    /// Counts connections made: what a caller keeps per connection (a loaded script) is stale
    /// when it changed.
    std::uint64_t connection_count() const { return connections_; }
    const redis_url& url() const { return url_; }
    std::uint64_t round_trips() const { return round_trips_; }
    /// For a caller that reads a reply itself (reply_or_error): one more round trip.
    void count_round_trip() { ++round_trips_; }

private:
    void connect();
    /// Asks the sentinels, in order, for the primary's address.
    redis_address discover();
    /// One sentinel, within `left`: the primary it names, or why not.
    std::variant<redis_address, std::string> ask_sentinel(const redis_address& sentinel,
                                                          std::chrono::milliseconds left);
    void open(const std::string& host, int port, const std::string& socket);
    void authenticate_and_check();
    /// Sends what is queued and reads until one reply is complete, within the time left.
    void* read_reply();
    /// The time left before the deadline (the whole time-out without one); throws
    /// redis_timeout when it is spent.
    std::chrono::milliseconds time_left(const char* doing);
    [[noreturn]] void fail(const std::string& what);
    [[noreturn]] void time_out(const char* doing);

    redis_url url_;
    std::string label_;
    std::chrono::milliseconds timeout_;
    std::optional<std::chrono::steady_clock::time_point> deadline_;
    redisContext* ctx_ = nullptr;
    std::size_t queued_ = 0;
    std::uint64_t round_trips_ = 0;
    std::uint64_t connections_ = 0;
    std::vector<const char*> argv_;
    std::vector<std::size_t> lens_;
};

}  // namespace alerts
