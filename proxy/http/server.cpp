#include "http/server.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "http/event_loop.hpp"
#include "http/session.hpp"

namespace actionloop {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Each connection is one descriptor: the soft limit (often 1024) goes up to the hard one.
void raise_open_files_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

class listener {
public:
    listener(asio::io_context& io, tcp::acceptor& acceptor, session_context& context)
        : io_(io), acceptor_(acceptor), retry_(io), context_(context) {}

    void accept() {
        acceptor_.async_accept(io_, [this](boost::system::error_code ec, loop_socket socket) {
            on_accept(ec, std::move(socket));
        });
    }

private:
    void on_accept(boost::system::error_code ec, loop_socket socket) {
        if (ec) {
            // Out of descriptors (or similar): try again shortly instead of spinning.
            spdlog::warn("cannot accept a connection: {}", ec.message());
            retry_.expires_after(std::chrono::milliseconds(10));
            retry_.async_wait([this](boost::system::error_code) { accept(); });
            return;
        }
        boost::system::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);  // a small answer must not wait
        std::make_shared<session>(std::move(socket), context_)->start();
        accept();
    }

    asio::io_context& io_;
    tcp::acceptor& acceptor_;
    asio::steady_timer retry_;
    session_context& context_;
};

// Throws std::runtime_error saying why the port cannot be listened on.
void bind_listener(tcp::acceptor& acceptor, const std::string& host, int port) {
    boost::system::error_code ec;
    const tcp::endpoint endpoint(asio::ip::make_address(host, ec),
                                 static_cast<unsigned short>(port));
    const std::string where = "cannot listen on " + host + ":" + std::to_string(port) + ": ";
    if (ec) throw std::runtime_error(where + "'" + host + "' is not an IP address");
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::runtime_error(where + ec.message());
}

}  // namespace

void serve_http(asio::io_context& loop, handler& requests, const listen_options& options,
                const std::function<bool()>& busy) {
    raise_open_files_limit();
    tcp::acceptor acceptor(loop);
    bind_listener(acceptor, options.host, options.port);
    connection_timeouts timeouts(loop);
    admission_limit unbounded(0);
    session_context context{requests, options.max_body_bytes, timeouts,
                            options.connections != nullptr ? *options.connections : unbounded,
                            options.metrics};
    listener accepting(loop, acceptor, context);
    accepting.accept();
    for (;;) {
        try {
            run_event_loop(loop, options.spin, busy);
            return;
        } catch (const std::exception& e) {
            spdlog::error("HTTP server: {}", e.what());  // one connection's problem
        }
    }
}

}  // namespace actionloop
