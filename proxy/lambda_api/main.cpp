// lambda-api: the local AWS Lambda Runtime API (docs/lambda-api.md). The proxy's HTTP server
// on one event loop, serving the rules of broker.hpp through api_handler.hpp; SIGINT and
// SIGTERM end it at once with status 0: it keeps nothing worth draining, and its connections
// (parked /next among them) are not torn down one by one (the sessions would outlive the
// server's state they point to, as in the proxy, which ends with _exit too).
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <random>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "http/server.hpp"
#include "lambda_api/api_handler.hpp"
#include "lambda_api/broker.hpp"
#include "lambda_api/options.hpp"
#include "logging.hpp"

namespace {

using namespace actionloop;
using namespace actionloop::lambda_api;

broker_config rules_of(const api_options& o) {
    broker_config c;
    c.max_concurrency = o.max_concurrency;
    c.max_queued = o.max_queue;
    c.max_parked = o.max_parked;
    c.kept_ids = o.keep_ids;
    c.max_body_bytes = o.max_body_bytes;
    c.timeout_ms = o.timeout_ms;
    c.invocation_ids = o.invocation_ids;
    c.function_arn = function_arn(o.function_name);
    return c;
}

int serve(const api_options& o) {
    boost::asio::io_context loop(1);
    broker rules(rules_of(o),
                 std::random_device{}() ^ (std::uint64_t{std::random_device{}()} << 32));
    api_handler requests(rules, loop);
    boost::asio::signal_set stop(loop, SIGINT, SIGTERM);
    stop.async_wait([](const boost::system::error_code& ec, int) {
        if (ec) return;
        std::cerr.flush();
        ::_exit(0);
    });
    std::cerr << "lambda-api: the Lambda Runtime API on http://" << o.host << ":" << o.port << " ("
              << (o.max_concurrency > 0 ? "Managed Instances mode, -max-concurrency " +
                                              std::to_string(o.max_concurrency)
                                        : std::string("classic mode"))
              << ", timeout " << o.timeout_ms << " ms)" << std::endl;
    const listen_options listen{
        o.host, o.port, o.max_body_bytes, std::chrono::microseconds(o.spin_us), nullptr, nullptr};
    serve_http(loop, requests, listen, [&requests] { return requests.busy(); });
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    ::signal(SIGPIPE, SIG_IGN);
    api_options options;
    try {
        options = parse_options(argc, argv);
    } catch (const std::invalid_argument& e) {
        std::cerr << e.what() << std::endl;
        return 2;
    }
    if (options.help) {
        std::cout << help_text();
        return 0;
    }
    if (options.version) {
        std::cout << "lambda-api v" << ACTIONLOOP_VERSION << " (actionloop-cpp)" << std::endl;
        return 0;
    }
    setup_logging(options.debug);
    try {
        return serve(options);
    } catch (const std::exception& e) {
        spdlog::critical("{}", e.what());
        flush_logs(std::chrono::seconds(2));
        return 1;
    }
}
