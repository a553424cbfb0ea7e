// proxy: the ActionLoop HTTP server (or, with -compile, the offline compiler).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <iterator>
#include <thread>

#include <spdlog/spdlog.h>

#include "action_proxy.hpp"
#include "logging.hpp"
#include "reaper.hpp"
#include "server.hpp"

extern char** environ;

namespace {

using namespace actionloop;

int offline_compile(action_proxy& proxy, const settings& config) {
    std::string payload((std::istreambuf_iterator<char>(std::cin)),
                        std::istreambuf_iterator<char>());
    try {
        std::string zip = proxy.compile_to_zip(payload, *config.compile_main, config.env_json);
        write_stdout(zip);
        return 0;
    } catch (const std::exception& e) {
        go_log(e.what());
        return 1;
    }
}

// SIGTERM and SIGINT are taken by a thread of their own (blocked everywhere else: this runs
// before any thread exists; children get a clean mask from spawn()). On either, the action
// and everything it left behind are killed and reaped, then the proxy dies of the signal as
// before (or exits 128+N where the signal cannot kill it: pid 1 in a container).
void stop_children_on_signals() {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    std::thread([stop] {
        int sig = 0;
        while (::sigwait(&stop, &sig) != 0) {
        }
        kill_all_children();
        ::signal(sig, SIG_DFL);
        ::pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);
        ::raise(sig);
        ::_exit(128 + sig);
    }).detach();
}

int serve(action_proxy& proxy, const settings& config) {
    stop_children_on_signals();
    start_reaper();
    spdlog::debug("listening on port {}", config.port);
    if (!serve_http(proxy, "0.0.0.0", config.port)) {
        spdlog::critical("cannot listen on port {}", config.port);
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    ::signal(SIGPIPE, SIG_IGN);
    settings config;
    try {
        config = load_settings(argc, argv);
    } catch (const std::invalid_argument& e) {
        std::cerr << e.what() << std::endl;
        return 2;
    }
    if (config.version) {
        std::cout << "OpenWhisk ActionLoop Proxy v" << ACTIONLOOP_VERSION
                  << " (actionloop-cpp), built with g++ " << __VERSION__ << std::endl;
        return 0;
    }
    setup_logging(config.debug);
    if (config.debug) ::setenv("OW_DEBUG", "1", 1);
    try {
        action_proxy proxy(config, environ);
        return config.compile_main ? offline_compile(proxy, config) : serve(proxy, config);
    } catch (const std::exception& e) {
        spdlog::critical("{}", e.what());
        return 1;
    }
}
