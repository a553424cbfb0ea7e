// One HTTP connection: read a request (header first, so an oversized body is refused before
// it is buffered, and 100-continue is answered), hand /run to the activation engine on this
// thread and /init to a worker (both counted in flight until their answer is written; refused
// with 503 while draining), answer /health itself, write the answer with one write (header and
// body together), and read the next request on the same buffers (keep-alive).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "action_proxy.hpp"
#include "http/answers.hpp"
#include "http/timeouts.hpp"
#include "knative/handler.hpp"
#include "ops/metrics.hpp"
#include "ops/shutdown.hpp"

namespace actionloop {

/// What every session shares.
struct server_context {
    action_proxy& proxy;
    boost::asio::thread_pool& workers;  // /init (and knative requests) block: they run here
    size_t max_body_bytes;
    drain_state& drain;                   // in-flight count; 503 while draining
    activation_metrics& metrics;          // counted when an answer is ready
    knative::handler* knative = nullptr;  // single-entrypoint mode: every request goes there
    connection_timeouts& timeouts;        // every connection's deadline
};

class session : public std::enable_shared_from_this<session> {
public:
    session(loop_socket socket, server_context& context)
        : stream_(std::move(socket)), context_(context), timeout_(context.timeouts.add(stream_)) {}
    ~session() { context_.timeouts.remove(timeout_); }
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    void start() { read_header(); }

private:
    using error_code = boost::beast::error_code;

    void read_header();
    void on_header(error_code ec);
    void read_body();
    bool parse_buffered_body();
    void on_body(error_code ec);
    bool answer_read_error(error_code ec);
    void dispatch();
    void answer_ready(route which, std::chrono::steady_clock::time_point started,
                      size_t request_bytes, http_answer answer);
    void dispatch_knative();
    void respond(int status, std::string body, bool json, bool close);
    void respond_knative(knative::response answer, bool head);
    void write_response(bool close);
    void on_written(error_code ec, bool close);
    void drain_and_close();

    loop_socket stream_;
    boost::beast::flat_buffer buffer_;  // reused across the connection's requests
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    boost::beast::http::response<boost::beast::http::string_body> response_;  // knative's
    std::string head_;  // an answer's status line and fields (reused)
    std::string body_;
    unsigned version_ = 11;
    bool keep_alive_ = true;
    std::optional<in_flight_ticket> ticket_;  // an /init or /run until its answer is written
    server_context& context_;
    connection_timeouts::handle timeout_;
};

}  // namespace actionloop
