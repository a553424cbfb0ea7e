// gateway_run.cpp — alertgw's process: signals, libcurl's global state, the /metrics listener
// on its own thread, and the delivery loop (see gateway.hpp).
#include <curl/curl.h>
#include <signal.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "gateway/gateway.hpp"
#include "gateway/loop/delivery_loop.hpp"
#include "metrics/metrics_server.hpp"

namespace alerts::gateway {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

void install_signals() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGINT, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
}

int run_loop(const options& settings) {
    delivery_loop loop(settings, g_stop);
    boost::asio::io_context io;
    std::thread metrics_thread;
    if (settings.metrics_port > 0) {
        actionloop::start_metrics_server(io, settings.metrics_address, settings.metrics_port,
                                         [&loop] { return loop.render_metrics(); });
        metrics_thread = std::thread([&io] { io.run(); });
    }
    const int code = loop.run();
    io.stop();
    if (metrics_thread.joinable()) metrics_thread.join();
    return code;
}

}  // namespace

int run(const options& settings) {
    install_signals();
    std::setvbuf(stdout, nullptr, _IOLBF, 1 << 16);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        throw std::runtime_error("cannot initialise libcurl");
    }
    const int code = run_loop(settings);
    curl_global_cleanup();
    return code;
}

}  // namespace alerts::gateway
