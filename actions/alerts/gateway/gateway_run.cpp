// gateway_run.cpp — alertgw's process: signals, libcurl's global state, the /metrics listener
// on its own thread, and the delivery loop (see gateway.hpp).
#include <curl/curl.h>
#include <signal.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>

#include "gateway/console/console_site.hpp"
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

double wall_clock() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The console on a thread of its own, with its own Redis connection: a slow page or API call
// never holds up a delivery (nor a /metrics scrape).
class console_thread {
public:
    console_thread(const options& settings, const delay_timeline& delays)
        : store_(settings.redis, settings.prefix),
          api_(store_, settings.console_token, wall_clock),
          site_(api_, delays, wall_clock) {
        const int port = actionloop::start_http_server(
            io_, settings.console_address, settings.console_port,
            [this](const actionloop::http_request& request) { return site_.handle(request); },
            "console");
        std::fprintf(
            stderr, "alertgw: console on http://%s:%d/ (writes %s)\n",
            settings.console_address.c_str(), port,
            settings.console_token.empty() ? "off: no --console-token-file" : "with the token");
        thread_ = std::thread([this] { io_.run(); });
    }
    ~console_thread() {
        io_.stop();
        if (thread_.joinable()) thread_.join();
    }

private:
    boost::asio::io_context io_;
    console_store store_;
    console_api api_;
    console_site site_;
    std::thread thread_;
};

int run_loop(const options& settings) {
    delivery_loop loop(settings, g_stop);
    boost::asio::io_context io;
    std::thread metrics_thread;
    if (settings.metrics_port > 0) {
        actionloop::start_metrics_server(io, settings.metrics_address, settings.metrics_port,
                                         [&loop] { return loop.render_metrics(); });
        metrics_thread = std::thread([&io] { io.run(); });
    }
    std::unique_ptr<console_thread> console;
    if (settings.console_port > 0) {
        console = std::make_unique<console_thread>(settings, loop.delays());
    }
    const int code = loop.run();
    console.reset();
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
