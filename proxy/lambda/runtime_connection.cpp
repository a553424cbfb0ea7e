#include "lambda/runtime_connection.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

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

}  // namespace

runtime_connection::runtime_connection(asio::io_context& loop, asio::ip::tcp::endpoint api,
                                       std::string host, std::size_t max_body_bytes)
    : api_(std::move(api)),
      host_(std::move(host)),
      max_body_bytes_(max_body_bytes),
      socket_(loop.get_executor()) {}

void runtime_connection::request(http::verb method, const std::string& target, std::string body,
                                 const header_list& headers, reply_fn done) {
    done_ = std::move(done);
    request_ = {};
    request_.method(method);
    request_.target(target);
    request_.version(11);
    request_.set(http::field::host, host_);
    for (const auto& [name, value] : headers) request_.set(name, value);
    if (method != http::verb::get) {
        request_.set(http::field::content_type, "application/json");
        request_.body() = std::move(body);
        request_.prepare_payload();
    }
    retried_ = false;
    if (socket_.is_open()) {
        reused_ = true;
        send();
    } else {
        connect();
    }
}

void runtime_connection::close() {
    error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
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
    http::async_write(socket_, request_, [this](const error_code& ec, std::size_t) {
        if (ec) return fail(ec);
        receive();
    });
}

void runtime_connection::receive() {
    parser_.emplace();
    parser_->body_limit(max_body_bytes_);
    parser_->header_limit(MAX_HEADER_BYTES);
    http::async_read(socket_, buffer_, *parser_, [this](const error_code& ec, std::size_t n) {
        // A connection the server closed while idle: nothing of this answer came.
        if (ec && reused_ && !retried_ && n == 0 && closed_by_peer(ec)) {
            retried_ = true;
            close();
            return connect();
        }
        if (ec) return fail(ec);
        response res = parser_->release();
        if (!res.keep_alive()) close();
        reply_fn done = std::move(done_);
        done(ec, res);
    });
}

void runtime_connection::fail(const error_code& ec) {
    close();
    response none;
    reply_fn done = std::move(done_);
    if (done) done(ec, none);
}

}  // namespace actionloop::lambda
