#include "http/http_server.hpp"

#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
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

struct shared_state {
    tcp::acceptor acceptor;
    asio::steady_timer retry;  // after an accept error (out of descriptors): no spinning
    http_handler handler;
    std::string name;
    http_warning warn;
    http_limits limits;
};

http_response plain(int status, std::string text) {
    http_response r;
    r.status = status;
    r.body = std::move(text) + "\n";
    return r;
}

// One connection: read a request, answer it, again while the client keeps it alive.
class session : public std::enable_shared_from_this<session> {
public:
    session(tcp::socket socket, std::shared_ptr<shared_state> state)
        : stream_(std::move(socket)), state_(std::move(state)) {}

    void read() {
        parser_.emplace();
        parser_->header_limit(static_cast<std::uint32_t>(state_->limits.max_head));
        parser_->body_limit(state_->limits.max_body);
        stream_.expires_after(state_->limits.idle);
        http::async_read(
            stream_, buffer_, *parser_,
            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
    }

private:
    void on_read(beast::error_code ec) {
        if (ec == http::error::body_limit) {
            answer(plain(413,
                         "the body is over " + std::to_string(state_->limits.max_body) + " bytes"),
                   11, false, false);
        } else if (ec == http::error::header_limit) {
            answer(plain(431, "the request's head is over " +
                                  std::to_string(state_->limits.max_head) + " bytes"),
                   11, false, false);
        } else if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
                   ec == asio::error::connection_reset || ec == asio::error::eof) {
            stream_.close();
        } else if (ec) {
            answer(plain(400, "bad request: " + ec.message()), 11, false, false);
        } else {
            const auto& req = parser_->get();
            http_request request;
            request.method = std::string(req.method_string());
            const std::string target(req.target());
            const auto q = target.find('?');
            request.path = target.substr(0, q);
            if (q != std::string::npos) request.query = target.substr(q + 1);
            request.body = req.body();
            request.authorization = std::string(req[http::field::authorization]);
            request.content_type = std::string(req[http::field::content_type]);
            http_response response;
            try {
                response = state_->handler(request);
            } catch (const std::exception& error) {
                response = plain(500, std::string("internal error: ") + error.what());
            }
            answer(std::move(response), req.version(), req.keep_alive(),
                   req.method() == http::verb::head);
        }
    }

    void answer(http_response r, unsigned version, bool keep_alive, bool head) {
        auto res = std::make_shared<http::response<http::string_body>>();
        res->version(version);
        res->keep_alive(keep_alive);
        res->result(static_cast<unsigned>(r.status));
        if (!r.body.empty() || r.status != 204) res->set(http::field::content_type, r.content_type);
        for (const auto& [name, value] : r.headers) res->set(name, value);
        res->body() = std::move(r.body);
        res->prepare_payload();
        if (head) res->body().clear();
        http::async_write(
            stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
                if (ec || !res->keep_alive()) {
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
    std::optional<http::request_parser<http::string_body>> parser_;
    std::shared_ptr<shared_state> state_;
};

void accept_next(const std::shared_ptr<shared_state>& state) {
    state->acceptor.async_accept([state](beast::error_code ec, tcp::socket socket) {
        if (!ec) {
            std::make_shared<session>(std::move(socket), state)->read();
            accept_next(state);
            return;
        }
        if (ec == asio::error::operation_aborted) return;  // the io_context stops
        const std::string line = state->name + ": cannot accept a connection: " + ec.message();
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

int start_http_server(asio::io_context& io, const std::string& host, int port, http_handler handler,
                      const std::string& name, http_warning warn, http_limits limits) {
    auto state = std::make_shared<shared_state>(
        shared_state{tcp::acceptor(io), asio::steady_timer(io), std::move(handler), name,
                     std::move(warn), limits});
    beast::error_code ec;
    const tcp::endpoint endpoint(asio::ip::make_address(host, ec),
                                 static_cast<unsigned short>(port));
    if (!ec) state->acceptor.open(endpoint.protocol(), ec);
    if (!ec) state->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) state->acceptor.bind(endpoint, ec);
    if (!ec) state->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
        throw std::runtime_error("cannot serve " + name + " on " + host + ":" +
                                 std::to_string(port) + ": " + ec.message());
    }
    const int bound = state->acceptor.local_endpoint().port();
    accept_next(state);
    return bound;
}

}  // namespace actionloop
