#include "http/server.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/spdlog.h>

#include "http/event_loop.hpp"
#include "http/session.hpp"
#include "ops/metrics_server.hpp"

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
    listener(asio::io_context& io, tcp::acceptor& acceptor, server_context& context)
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
    server_context& context_;
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

// A scrape: the counters plus what is read at scrape time.
std::string scrape(action_proxy& proxy, const server_ops& ops) {
    metrics_gauges gauges;
    gauges.restarts = proxy.action_restarts();
    gauges.queue_depth = proxy.queued();
    gauges.in_flight = ops.drain.in_flight();
    gauges.resident_bytes = resident_bytes();
    return render_metrics(ops.metrics, gauges);
}

}  // namespace

void serve_http(action_proxy& proxy, const std::string& host, int port, const server_ops& ops) {
    raise_open_files_limit();
    asio::io_context io(1);
    tcp::acceptor acceptor(io);
    // The metrics port first: once the action port accepts, both do.
    if (ops.metrics_port != 0) {
        start_metrics_server(io, host, ops.metrics_port,
                             [&proxy, ops] { return scrape(proxy, ops); });
    }
    asio::thread_pool workers(std::max<size_t>(proxy.config().threads, 1));
    proxy.attach(io, workers);
    bind_listener(acceptor, host, port);
    connection_timeouts timeouts(io);
    server_context context{proxy,     workers,     proxy.config().max_body_bytes,
                           ops.drain, ops.metrics, ops.knative,
                           timeouts};
    listener accepting(io, acceptor, context);
    accepting.accept();
    for (;;) {
        try {
            run_event_loop(io, std::chrono::microseconds(proxy.config().spin_us),
                           [&ops] { return ops.drain.in_flight() > 0; });
            return;
        } catch (const std::exception& e) {
            spdlog::error("HTTP server: {}", e.what());  // one connection's problem
        }
    }
}

}  // namespace actionloop
