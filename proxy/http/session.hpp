// One HTTP connection, Beast I/O only: read a request (header first, so an oversized body is
// refused before it is buffered, and 100-continue is answered), hand it to the handler (the
// protocol layer: protocol/exchange.hpp), write its answer with one write (header and body
// together), and read the next request on the same buffers (keep-alive). It knows no route:
// the only answers it makes itself are for requests it cannot read (413, 400), rendered by
// the protocol's error renderer.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "engine/activation_queue.hpp"
#include "http/timeouts.hpp"
#include "ops/metrics.hpp"
#include "protocol/exchange.hpp"

namespace actionloop {

/// What every session shares.
struct session_context {
    handler& handle;                // every request that could be read
    size_t max_body_bytes;          // OW_MAX_BODY_BYTES
    connection_timeouts& timeouts;  // every connection's deadline
    admission_limit& connections;   // OW_MAX_CONNECTIONS: the sessions that may be served
    activation_metrics* metrics;    // counts the connections refused (may be null)
};

class session : public std::enable_shared_from_this<session>, private client_watch {
public:
    /// Past OW_MAX_CONNECTIONS open sessions, a new one is over the limit: it answers /health
    /// and, to anything else, 503 with Retry-After, then closes (each answer, never a drop).
    session(loop_socket socket, session_context& context)
        : stream_(std::move(socket)),
          context_(context),
          timeout_(context.timeouts.add(stream_)),
          admitted_(context.connections.try_enter()) {}
    ~session() {
        context_.timeouts.remove(timeout_);
        if (admitted_) context_.connections.leave();
    }
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    void start() { read_header(); }

private:
    using error_code = boost::beast::error_code;

    void read_header();
    void on_header(error_code ec);
    bool refuse_over_limit();
    void read_body();
    bool parse_buffered_body();
    void on_body(error_code ec);
    void answer_read_error(error_code ec);
    void dispatch();
    void respond(answer a, bool drain_after);
    void on_written(error_code ec, bool drain_after);
    void drain_and_close();
    void on_gone(std::function<void()> gone) override;
    void watch_readable();
    void on_readable(error_code ec, unsigned watch);

    loop_socket stream_;
    boost::beast::flat_buffer buffer_;  // reused across the connection's requests
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    std::string head_;  // an answer's status line and fields (reused)
    std::string body_;
    unsigned version_ = 11;
    bool keep_alive_ = true;
    std::optional<in_flight_ticket> ticket_;  // an admitted request until its answer is written
    session_context& context_;
    connection_timeouts::handle timeout_;
    bool admitted_;               // within OW_MAX_CONNECTIONS (else only /health is served)
    std::function<void()> gone_;  // a held request's client_watch, until its answer
    unsigned watch_ = 0;          // which watch a readiness wait belongs to
};

}  // namespace actionloop
