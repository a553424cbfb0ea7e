// redis_client.hpp — one hiredis connection with pipelining: queue commands with append(),
// then read their replies in order with reply(). Any failure (cannot connect, time-out, a
// broken connection, an error reply) throws redis_error and drops the connection; the next
// append() connects again. A nil element of an array reply (MGET) is a null pointer.
// Time: between start_deadline() and clear_deadline() (one activation), connecting, sending
// and every wait for a reply share one budget of `timeout` (ALERT_REDIS_TIMEOUT_MS), however
// many round trips it takes; outside them each connect or reply gets the whole `timeout`.
// Running out throws redis_timeout, whose message says "timed out".
#pragma once

#include <hiredis.h>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "../runtime/redis_url.hpp"

namespace alerts {

class redis_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The time budget ran out (Redis did not answer in time): no point in trying again at once.
class redis_timeout : public redis_error {
public:
    using redis_error::redis_error;
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
    /// Sends the queued commands and reads their replies: one round trip.
    std::vector<redis_reply> replies(std::size_t n);
    /// From now on, everything shares one budget of `timeout` (one activation's I/O).
    void start_deadline() { deadline_ = std::chrono::steady_clock::now() + timeout_; }
    void clear_deadline() { deadline_.reset(); }
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
    /// Sends what is queued and reads until one reply is complete, within the time left.
    void* read_reply();
    /// The time left before the deadline (the whole time-out without one); throws
    /// redis_timeout when it is spent.
    std::chrono::milliseconds time_left(const char* doing);
    [[noreturn]] void fail(const std::string& what);
    [[noreturn]] void time_out(const char* doing);

    redis_url url_;
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
