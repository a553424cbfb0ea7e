#include "http/session.hpp"

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <chrono>

#include <boost/asio/write.hpp>

#include "protocol/error_answer.hpp"
#include "protocol/router.hpp"

namespace actionloop {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace std::chrono_literals;

constexpr auto IDLE_TIMEOUT = 60s;       // between two requests of a keep-alive connection
constexpr auto IO_TIMEOUT = 300s;        // a slow client sending a large action, or reading
constexpr auto OVER_LIMIT_TIMEOUT = 5s;  // for a request header past OW_MAX_CONNECTIONS
constexpr size_t HEADER_LIMIT = 64u << 10;
constexpr size_t DRAIN_LIMIT = 1u << 30;  // what is read and dropped after a 413
constexpr const char* CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace

void session::read_header() {
    parser_.emplace();
    parser_->header_limit(HEADER_LIMIT);
    parser_->body_limit(context_.max_body_bytes);
    if (!admitted_) admitted_ = context_.connections.try_enter();  // a place came free
    connection_timeouts::expires_after(timeout_, admitted_ ? IDLE_TIMEOUT : OVER_LIMIT_TIMEOUT);
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
    if (refuse_over_limit()) return;
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

// Past OW_MAX_CONNECTIONS: a probe (/health) is still served; any other request is answered
// 503 before its body is read, the rest of it dropped, and the connection ends. True when
// refused.
bool session::refuse_over_limit() {
    if (admitted_) return false;
    const auto target = parser_->get().target();
    if (route_of(std::string_view(target.data(), target.size())) == route::health) return false;
    if (context_.metrics != nullptr) {
        context_.metrics->refused(activation_metrics::refusal_reason::connections);
    }
    respond(too_many_connections_answer(context_.connections.max()), true);
    return true;
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
// answer: nobody to read it).
void session::answer_read_error(error_code ec) {
    if (ec == http::error::body_limit) {
        const auto target = parser_->get().target();
        std::optional<answer> own = context_.handle.too_large(
            std::string_view(target.data(), target.size()), context_.max_body_bytes);
        respond(own ? std::move(*own) : too_large_answer(context_.max_body_bytes), true);
        return;
    }
    // Socket errors and timeouts are not the parser's; nor is a stream that ends early.
    const bool gone = ec.category() != make_error_code(http::error::bad_target).category() ||
                      ec == http::error::end_of_stream || ec == http::error::partial_message;
    if (gone) {
        error_code ignored;
        stream_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        stream_.close(ignored);
        return;
    }
    respond(malformed_request_answer(), true);
}

void session::dispatch() {
    connection_timeouts::expires_never(timeout_);
    auto& message = parser_->get();
    request req;
    const auto method = message.method_string();
    const auto target = message.target();
    req.method = std::string_view(method.data(), method.size());
    req.target = std::string_view(target.data(), target.size());
    if (context_.handle.needs_headers()) {
        for (const auto& field : message) {
            req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
        }
    }
    req.body = std::move(message.body());
    req.ticket = &ticket_;
    req.watch = this;
    context_.handle.handle(std::move(req), [self = shared_from_this()](answer a) {
        self->respond(std::move(a), false);
    });
}

// The one answer writer: header and body in one write (a gather of two buffers). The header
// is written into a reused string: the status line, Content-Type for a JSON answer, the
// answer's own fields, Connection where the version needs it, Content-Length unless the
// answer has no body (204, 304); to HEAD, the length of the body that GET would send, without
// it. `drain_after`: the request could not be read; the connection ends, its rest dropped.
void session::respond(answer a, bool drain_after) {
    if (gone_) {  // the answer ends the watch: its readiness wait is cancelled
        gone_ = nullptr;
        error_code ignored;
        stream_.cancel(ignored);
    }
    if (a.last || drain_after) keep_alive_ = false;
    head_.clear();
    head_.append(version_ == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    head_.append(std::to_string(a.status)).push_back(' ');
    const auto reason = http::obsolete_reason(static_cast<http::status>(a.status));
    head_.append(reason.data(), reason.size()).append("\r\n");
    if (a.json) head_.append("Content-Type: application/json\r\n");
    for (const auto& [name, value] : a.headers) {
        head_.append(name).append(": ").append(value).append("\r\n");
    }
    if (version_ >= 11 && !keep_alive_) head_.append("Connection: close\r\n");
    if (version_ < 11 && keep_alive_) head_.append("Connection: keep-alive\r\n");
    if (!a.bodyless) {
        head_.append("Content-Length: ").append(std::to_string(a.body.size())).append("\r\n");
    }
    head_.append("\r\n");
    body_ = (a.bodyless || a.head) ? std::string() : std::move(a.body);
    connection_timeouts::expires_after(timeout_, IO_TIMEOUT);
    const std::array<asio::const_buffer, 2> parts{asio::buffer(head_), asio::buffer(body_)};
    asio::async_write(stream_, parts,
                      [self = shared_from_this(), drain_after](error_code ec, size_t) {
                          self->on_written(ec, drain_after);
                      });
}

void session::on_written(error_code ec, bool drain_after) {
    ticket_.reset();  // the activation is over: a drain may end now
    if (ec) {
        error_code ignored;
        stream_.close(ignored);
        return;
    }
    if (drain_after) {
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

// A held request's watch (client_watch): while the handler holds the request nothing is read
// from the connection, so a wait for readability tells when the client closes it (or sends
// more). The wait is numbered: one cancelled by the answer, or outlived by a later request's
// watch, finds its number stale and does nothing.
void session::on_gone(std::function<void()> gone) {
    gone_ = std::move(gone);
    ++watch_;
    watch_readable();
}

void session::watch_readable() {
    stream_.async_wait(asio::socket_base::wait_read,
                       [self = shared_from_this(), watch = watch_](error_code ec) {
                           self->on_readable(ec, watch);
                       });
}

// Readable while the request is held: the end of the stream (or a socket error) is the client
// gone; bytes are a pipelined request, which ends the watch (it cannot tell any more).
void session::on_readable(error_code ec, unsigned watch) {
    if (watch != watch_ || !gone_) return;
    if (!ec) {
        char byte = 0;
        const ssize_t n = ::recv(stream_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) {
            gone_ = nullptr;
            return;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            watch_readable();
            return;
        }
    }
    const std::function<void()> gone = std::move(gone_);
    gone_ = nullptr;
    error_code ignored;
    stream_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    stream_.close(ignored);
    gone();
}

}  // namespace actionloop
