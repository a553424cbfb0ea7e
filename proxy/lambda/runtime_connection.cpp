#include "lambda/runtime_connection.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>

namespace actionloop::lambda {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// Headers of an answer from the Runtime API: the client context and the identity may take a
// few kilobytes; more than this is not a Runtime API.
constexpr std::uint32_t MAX_HEADER_BYTES = 64u << 10;

// What a keep-alive connection the other side closed looks like on the next request.
bool closed_by_peer(const error_code& ec) {
    return ec == http::error::end_of_stream || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
}

// A header value as it may be written: no CR, LF or other control character (an errorType
// comes from the action's line).
void append_value(std::string& out, const std::string& value) {
    for (char c : value) {
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out.push_back(c);
    }
}

}  // namespace

runtime_connection::runtime_connection(asio::io_context& loop, asio::ip::tcp::endpoint api,
                                       std::string host, std::size_t max_body_bytes)
    : api_(std::move(api)),
      host_(std::move(host)),
      max_body_bytes_(max_body_bytes),
      socket_(loop.get_executor()) {}

void runtime_connection::append_request(const char* method, const std::string& target,
                                        const std::string* body, const header_list& headers) {
    out_ += method;
    out_ += ' ';
    out_ += target;
    out_ += " HTTP/1.1\r\nHost: ";
    out_ += host_;
    out_ += "\r\n";
    for (const auto& [name, value] : headers) {
        out_ += name;
        out_ += ": ";
        append_value(out_, value);
        out_ += "\r\n";
    }
    if (body != nullptr) {
        out_ += "Content-Type: application/json\r\nContent-Length: ";
        out_ += std::to_string(body->size());
        out_ += "\r\n\r\n";
        out_ += *body;
    } else {
        out_ += "\r\n";
    }
}

void runtime_connection::get(const std::string& target, reply_fn done) {
    out_.clear();
    append_request("GET", target, nullptr, {});
    waiting_.clear();
    waiting_.push_back(std::move(done));
    start();
}

void runtime_connection::post(const std::string& target, const std::string& body,
                              const header_list& headers, reply_fn done,
                              const std::string& then_get, reply_fn then_done) {
    out_.clear();
    append_request("POST", target, &body, headers);
    waiting_.clear();
    waiting_.push_back(std::move(done));
    if (!then_get.empty()) {
        append_request("GET", then_get, nullptr, {});
        waiting_.push_back(std::move(then_done));
    }
    start();
}

void runtime_connection::close() {
    error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
}

void runtime_connection::start() {
    retried_ = false;
    answered_ = false;
    if (socket_.is_open()) {
        reused_ = true;
        send();
    } else {
        connect();
    }
}

void runtime_connection::connect() {
    reused_ = false;
    buffer_.clear();
    socket_.async_connect(api_, [this](const error_code& ec) {
        if (ec) return fail(ec);
        error_code ignored;
        socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
        send();
    });
}

void runtime_connection::send() {
    asio::async_write(socket_, asio::buffer(out_), [this](const error_code& ec, std::size_t) {
        if (ec && reused_ && !retried_ && closed_by_peer(ec)) {
            retried_ = true;
            close();
            return connect();
        }
        if (ec) return fail(ec);
        receive();
    });
}

void runtime_connection::receive() {
    parser_.emplace();
    parser_->body_limit(max_body_bytes_);
    parser_->header_limit(MAX_HEADER_BYTES);
    http::async_read(socket_, buffer_, *parser_, [this](const error_code& ec, std::size_t n) {
        // A connection the server closed while idle: nothing of these answers came.
        if (ec && reused_ && !retried_ && !answered_ && n == 0 && closed_by_peer(ec)) {
            retried_ = true;
            close();
            return connect();
        }
        if (ec) return fail(ec);
        answered_ = true;
        response res = parser_->release();
        const bool keep = res.keep_alive();
        reply_fn done = std::move(waiting_.front());
        waiting_.pop_front();
        if (!keep) {
            // The rest of this write will not be answered on this connection.
            close();
            std::deque<reply_fn> rest;
            rest.swap(waiting_);
            done(ec, res);
            response none;
            for (auto& r : rest) r(asio::error::connection_aborted, none);
            return;
        }
        const bool more = !waiting_.empty();
        // The next answer is read before the callback runs: it may start a new request.
        if (more) receive();
        done(ec, res);
    });
}

void runtime_connection::fail(const error_code& ec) {
    close();
    std::deque<reply_fn> failed;
    failed.swap(waiting_);
    response none;
    for (auto& done : failed) done(ec, none);
}

}  // namespace actionloop::lambda
