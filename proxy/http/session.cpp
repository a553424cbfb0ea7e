#include "http/session.hpp"

#include <array>
#include <chrono>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "http/answers.hpp"
#include "http/health.hpp"
#include "http/http_error.hpp"

namespace actionloop {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace std::chrono_literals;

constexpr auto IDLE_TIMEOUT = 60s;  // between two requests of a keep-alive connection
constexpr auto IO_TIMEOUT = 300s;   // a slow client sending a large action, or reading
constexpr size_t HEADER_LIMIT = 64u << 10;
constexpr size_t DRAIN_LIMIT = 1u << 30;  // what is read and dropped after a 413
constexpr const char* CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace

void session::read_header() {
    parser_.emplace();
    parser_->header_limit(HEADER_LIMIT);
    parser_->body_limit(context_.max_body_bytes);
    connection_timeouts::expires_after(timeout_, IDLE_TIMEOUT);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, size_t) { self->on_header(ec); });
}

void session::on_header(error_code ec) {
    if (ec) {
        answer_read_error(ec);
        return;
    }
    const auto& request = parser_->get();
    version_ = request.version();
    keep_alive_ = request.keep_alive();
    if (parser_->is_done()) {
        dispatch();
        return;
    }
    if (boost::beast::iequals(request[http::field::expect], "100-continue")) {
        connection_timeouts::expires_after(timeout_, IO_TIMEOUT);
        asio::async_write(stream_, asio::buffer(CONTINUE, std::char_traits<char>::length(CONTINUE)),
                          [self = shared_from_this()](error_code write_ec, size_t) {
                              if (!write_ec) self->read_body();
                          });
        return;
    }
    if (parse_buffered_body()) dispatch();
}

// The body usually comes in the same segment as the header: parsed from the buffer here (by
// Beast's parser, as async_read would) instead of in one more asynchronous read that
// completes at once. True when the request is complete and dispatched next; false when the
// rest is being read (read_body) or an error was answered.
bool session::parse_buffered_body() {
    parser_->eager(true);
    error_code ec;
    while (buffer_.size() > 0 && !parser_->is_done()) {
        const size_t used = parser_->put(buffer_.data(), ec);
        buffer_.consume(used);
        if (ec == http::error::need_more) {
            ec = {};
            break;
        }
        if (ec || used == 0) break;
    }
    if (ec) {
        answer_read_error(ec);
        return false;
    }
    if (parser_->is_done()) return true;
    read_body();
    return false;
}

void session::read_body() {
    connection_timeouts::expires_after(timeout_, IO_TIMEOUT);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, size_t) { self->on_body(ec); });
}

void session::on_body(error_code ec) {
    if (ec) {
        answer_read_error(ec);
        return;
    }
    dispatch();
}

// A request that could not be read: too large (413, then the rest is read and dropped so
// the client gets its answer, not a reset), malformed (400), or the client is gone (no
// answer: nobody to read it). Returns whether an answer was sent.
bool session::answer_read_error(error_code ec) {
    if (ec == http::error::body_limit) {
        keep_alive_ = false;
        respond(PAYLOAD_TOO_LARGE, error_body(too_large_message(context_.max_body_bytes)), true,
                true);
        return true;
    }
    // Socket errors and timeouts are not the parser's; nor is a stream that ends early.
    const bool gone = ec.category() != make_error_code(http::error::bad_target).category() ||
                      ec == http::error::end_of_stream || ec == http::error::partial_message;
    if (gone) {
        error_code ignored;
        stream_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        stream_.close(ignored);
        return false;
    }
    keep_alive_ = false;
    respond(BAD_REQUEST, error_body("HTTP error 400"), true, true);
    return true;
}

void session::dispatch() {
    connection_timeouts::expires_never(timeout_);
    const auto target = parser_->get().target();
    const route which = route_of(std::string_view(target.data(), target.size()));
    if (which == route::health) {  // in both modes: probes do not depend on the platform
        http_answer health = health_answer(context_.drain.draining(), context_.proxy.overrun());
        respond(health.status, std::move(health.body), true, false);
        return;
    }
    if (context_.knative != nullptr) {
        dispatch_knative();
        return;
    }
    if (which == route::other) {
        respond(OK, std::string(), false, false);  // upstream: 200, nothing
        return;
    }
    std::string body = std::move(parser_->get().body());
    if (!context_.drain.enter()) {  // shutting down: the invoker takes it elsewhere
        keep_alive_ = false;
        answer_ready(which, std::chrono::steady_clock::now(), body.size(), shutting_down_answer());
        return;
    }
    ticket_.emplace(context_.drain);
    const auto started = std::chrono::steady_clock::now();
    const size_t size = body.size();
    if (which == route::run) {  // on this thread, start to end (engine.hpp)
        context_.proxy.run(std::move(body),
                           [self = shared_from_this(), started, size](http_answer answer) {
                               self->answer_ready(route::run, started, size, std::move(answer));
                           });
        return;
    }
    // /init blocks (extraction, the compiler, the action's start): on a worker.
    context_.proxy.init_started();
    // The worker hands its reference to the loop (moved, not copied): a session ends on the
    // loop's thread, whose connection list it leaves.
    asio::post(
        context_.workers, [self = shared_from_this(), started, body = std::move(body)]() mutable {
            http_answer answer = answer_for(self->context_.proxy, route::init, body);
            auto& loop = self->stream_;
            asio::post(loop.get_executor(), [self = std::move(self), started, size = body.size(),
                                             answer = std::move(answer)]() mutable {
                self->context_.proxy.init_finished();
                self->answer_ready(route::init, started, size, std::move(answer));
            });
        });
}

// An /init or /run answer, on the io thread: counted, then written.
void session::answer_ready(route which, std::chrono::steady_clock::time_point started,
                           size_t request_bytes, http_answer answer) {
    context_.metrics.record(which == route::run, answer.status, answer.body, request_bytes,
                            std::chrono::steady_clock::now() - started);
    respond(answer.status, std::move(answer.body), true, false);
}

// Single-entrypoint mode: every request goes to the knative handler, on a worker.
void session::dispatch_knative() {
    auto& message = parser_->get();
    knative::request request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    for (const auto& field : message) {
        request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    const bool head = message.method() == http::verb::head;
    const size_t request_bytes = request.body.size();
    if (!context_.drain.enter()) {  // shutting down, as for /init and /run
        keep_alive_ = false;
        answer_ready(route::run, std::chrono::steady_clock::now(), request_bytes,
                     shutting_down_answer());
        return;
    }
    ticket_.emplace(context_.drain);
    const auto started = std::chrono::steady_clock::now();
    asio::post(context_.workers, [self = shared_from_this(), request = std::move(request), head,
                                  started, request_bytes]() mutable {
        knative::response answer = self->context_.knative->handle(request);
        auto& loop = self->stream_;
        asio::post(loop.get_executor(), [self = std::move(self), answer = std::move(answer), head,
                                         started, request_bytes]() mutable {
            // Counted as a /run: one request is one activation (its init included).
            self->context_.metrics.record(true, answer.status, answer.body, request_bytes,
                                          std::chrono::steady_clock::now() - started);
            self->respond_knative(std::move(answer), head);
        });
    });
}

// A web answer: the handler's status and headers; Content-Length unless bodyless (204, 304);
// to HEAD, the length of the body that GET would send, without it.
void session::respond_knative(knative::response answer, bool head) {
    response_ = {};
    response_.version(version_);
    response_.result(static_cast<unsigned>(answer.status));
    for (const auto& [name, value] : answer.headers) response_.insert(name, value);
    response_.keep_alive(keep_alive_);
    if (!answer.bodyless) {
        response_.content_length(answer.body.size());
        if (!head) response_.body() = std::move(answer.body);
    }
    write_response(false);
}

// One answer, header and body in one write (a gather of two buffers); Content-Length always.
// The header is written here into a reused string, field for field what Beast's serializer
// wrote (Content-Type, Connection where the version needs it, Content-Length), without
// building a field list per answer.
void session::respond(int status, std::string body, bool json, bool close) {
    const bool keep = keep_alive_ && !close;
    head_.clear();
    head_.append(version_ == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    head_.append(std::to_string(status)).push_back(' ');
    const auto reason = http::obsolete_reason(static_cast<http::status>(status));
    head_.append(reason.data(), reason.size()).append("\r\n");
    if (json) head_.append("Content-Type: application/json\r\n");
    if (version_ >= 11 && !keep) head_.append("Connection: close\r\n");
    if (version_ < 11 && keep) head_.append("Connection: keep-alive\r\n");
    head_.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n\r\n");
    body_ = std::move(body);
    connection_timeouts::expires_after(timeout_, IO_TIMEOUT);
    const std::array<asio::const_buffer, 2> parts{asio::buffer(head_), asio::buffer(body_)};
    asio::async_write(stream_, parts, [self = shared_from_this(), close](error_code ec, size_t) {
        self->on_written(ec, close);
    });
}

void session::write_response(bool close) {
    connection_timeouts::expires_after(timeout_, IO_TIMEOUT);
    http::async_write(
        stream_, response_,
        [self = shared_from_this(), close](error_code ec, size_t) { self->on_written(ec, close); });
}

void session::on_written(error_code ec, bool close) {
    ticket_.reset();  // the activation is over: a drain may end now
    if (ec) {
        error_code ignored;
        stream_.close(ignored);
        return;
    }
    if (close) {
        drain_and_close();
        return;
    }
    if (!keep_alive_) {
        error_code ignored;
        stream_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
        stream_.close(ignored);
        return;
    }
    read_header();
}

// After an answer that ends the connection early (413, 400): stop sending, then read and
// drop what the client still sends until it closes (a bounded while), so closing does not
// reset the connection before the client has read the answer.
void session::drain_and_close() {
    error_code ignored;
    stream_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    struct drain {
        std::shared_ptr<session> self;
        std::shared_ptr<std::array<char, 16384>> scratch;
        size_t dropped = 0;
        void operator()(error_code ec, size_t n) {
            dropped += n;
            if (ec || dropped > DRAIN_LIMIT) {
                error_code ignored;
                self->stream_.close(ignored);
                return;
            }
            self->stream_.async_read_some(asio::buffer(*scratch), std::move(*this));
        }
    };
    connection_timeouts::expires_after(timeout_, std::chrono::seconds(5));
    drain{shared_from_this(), std::make_shared<std::array<char, 16384>>()}(error_code{}, 0);
}

}  // namespace actionloop
