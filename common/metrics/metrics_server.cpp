#include "metrics/metrics_server.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace actionloop {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto SCRAPE_TIMEOUT = std::chrono::seconds(30);
constexpr const char* TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";

struct shared_state {
    tcp::acceptor acceptor;
    asio::steady_timer retry;  // after an accept error (out of descriptors): no spinning
    metrics_renderer render;
    metrics_warning warn;
};

// One scrape connection: read a request, answer it, again while the client keeps it alive.
class scrape_session : public std::enable_shared_from_this<scrape_session> {
public:
    scrape_session(tcp::socket socket, std::shared_ptr<shared_state> state)
        : stream_(std::move(socket)), state_(std::move(state)) {}

    void read() {
        request_ = {};
        stream_.expires_after(SCRAPE_TIMEOUT);
        http::async_read(stream_, buffer_, request_,
                         [self = shared_from_this()](beast::error_code ec, std::size_t) {
                             if (ec) {
                                 self->stream_.close();
                             } else {
                                 self->answer();
                             }
                         });
    }

private:
    void answer() {
        response_ = {};
        response_.version(request_.version());
        response_.keep_alive(request_.keep_alive());
        const auto target = request_.target();
        const auto path = target.substr(0, target.find('?'));
        if (path != "/metrics") {
            response_.result(http::status::not_found);
        } else if (request_.method() != http::verb::get && request_.method() != http::verb::head) {
            response_.result(http::status::method_not_allowed);
            response_.set(http::field::allow, "GET, HEAD");
        } else {
            response_.result(http::status::ok);
            response_.set(http::field::content_type, TEXT_FORMAT);
            response_.body() = state_->render();
        }
        response_.prepare_payload();
        if (request_.method() == http::verb::head) response_.body().clear();
        http::async_write(
            stream_, response_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
                if (ec || !self->response_.keep_alive()) {
                    beast::error_code ignored;
                    self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                    self->stream_.close();
                    return;
                }
                self->read();
            });
    }

    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    http::request<http::string_body> request_;
    http::response<http::string_body> response_;
    std::shared_ptr<shared_state> state_;
};

void accept_next(const std::shared_ptr<shared_state>& state) {
    state->acceptor.async_accept([state](beast::error_code ec, tcp::socket socket) {
        if (!ec) {
            std::make_shared<scrape_session>(std::move(socket), state)->read();
            accept_next(state);
            return;
        }
        const std::string line = "metrics: cannot accept a connection: " + ec.message();
        if (state->warn) {
            state->warn(line);
        } else {
            std::fprintf(stderr, "%s\n", line.c_str());
        }
        state->retry.expires_after(std::chrono::milliseconds(10));
        state->retry.async_wait([state](beast::error_code) { accept_next(state); });
    });
}

}  // namespace

int start_metrics_server(asio::io_context& io, const std::string& host, int port,
                         metrics_renderer render, metrics_warning warn) {
    auto state = std::make_shared<shared_state>(shared_state{
        tcp::acceptor(io), asio::steady_timer(io), std::move(render), std::move(warn)});
    beast::error_code ec;
    const tcp::endpoint endpoint(asio::ip::make_address(host, ec),
                                 static_cast<unsigned short>(port));
    if (!ec) state->acceptor.open(endpoint.protocol(), ec);
    if (!ec) state->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) state->acceptor.bind(endpoint, ec);
    if (!ec) state->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
        throw std::runtime_error("cannot serve metrics on " + host + ":" + std::to_string(port) +
                                 ": " + ec.message());
    }
    const int bound = state->acceptor.local_endpoint().port();
    accept_next(state);
    return bound;
}

}  // namespace actionloop
