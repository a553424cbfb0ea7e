#include "lambda/lambda_mode.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/spdlog.h>

#include "engine/cgroup_memory.hpp"
#include "engine/process.hpp"
#include "engine/reaper.hpp"
#include "lambda/poller.hpp"
#include "logging.hpp"
#include "ops/shutdown.hpp"
#include "protocol/base64.hpp"
#include "protocol/knative/platform.hpp"

namespace actionloop::lambda {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// AWS_LAMBDA_RUNTIME_API ("127.0.0.1:9001", "localhost:9001", "[::1]:9001") resolved once.
// Throws std::invalid_argument with the reason.
api_address resolve_api(const std::string& text) {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
        throw std::invalid_argument("AWS_LAMBDA_RUNTIME_API must be host:port, got '" + text + "'");
    }
    std::string name = text.substr(0, colon);
    if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
        name = name.substr(1, name.size() - 2);
    }
    asio::io_context scratch;
    tcp::resolver resolver(scratch);
    boost::system::error_code ec;
    auto found = resolver.resolve(name, text.substr(colon + 1), ec);
    if (ec || found.empty()) {
        throw std::invalid_argument("AWS_LAMBDA_RUNTIME_API '" + text +
                                    "': cannot resolve it: " + ec.message());
    }
    return {found.begin()->endpoint(), text};
}

// The action: a dedicated image's baked code (__OW_ACTION_CODE / OW_ACTION_CODE_FILE, as in
// single-entrypoint mode), else LAMBDA_TASK_ROOT/exec as it is.
init_outcome start_action(action_host& host) {
    const auto turn = host.init_turn();
    std::optional<knative::dedicated_action> baked;
    try {
        baked = knative::dedicated_from_env([](const char* name) { return std::getenv(name); });
    } catch (const std::exception& e) {
        return {init_outcome::result::build_failed, e.what(), {}};
    }
    if (!baked) return host.init_prebuilt(host.config().lambda_task_root);
    std::string code;
    try {
        code = baked->binary ? decode_base64(baked->code) : baked->code;
    } catch (const std::exception& e) {
        return {init_outcome::result::build_failed, e.what(), {}};
    }
    return host.init(code, baked->main.empty() ? "main" : baked->main, nlohmann::json::object());
}

// Posts the init error and waits for its answer (at most 10 s: the process exits next).
void post_init_error(asio::io_context& loop, const api_address& api, const post& p) {
    runtime_connection connection(loop, api.endpoint, api.host, 1u << 20);
    header_list headers = {{"Lambda-Runtime-Function-Error-Type", p.error_type}};
    connection.post(p.target, p.body, headers,
                    [&loop](const boost::system::error_code& ec, response& res) {
                        if (ec) {
                            spdlog::error("POST {} failed: {}", INIT_ERROR_PATH, ec.message());
                        } else if (res.result_int() / 100 != 2) {
                            spdlog::error("POST {} answered {}", INIT_ERROR_PATH, res.result_int());
                        }
                        loop.stop();
                    });
    loop.run_for(std::chrono::seconds(10));
}

}  // namespace

int run(action_host& host) {
    const settings& config = host.config();
    api_address api;
    try {
        api = resolve_api(config.lambda_runtime_api);
    } catch (const std::invalid_argument& e) {
        spdlog::critical("{}", e.what());
        return 2;
    }
    start_log_writers(config.log_buffer_bytes);
    static drain_state drain;  // static: the signal thread may outlive this frame
    handle_stop_signals(drain, std::chrono::milliseconds(config.shutdown_timeout_ms),
                        [&host](std::chrono::milliseconds left) { host.shutdown_action(left); });
    start_reaper();
    watch_memory_cgroup(memory_cgroup::of_this_process(config.cgroup_dir));
    asio::io_context loop(1);
    asio::thread_pool blocking(std::max<std::size_t>(config.threads, 1));
    host.attach(loop, blocking);
    const init_outcome started = start_action(host);
    if (started.kind != init_outcome::result::started) {
        spdlog::critical("the action did not start: {}", started.error);
        post_init_error(loop, api, init_error_post(started.error, started.stderr_tail));
        return 1;
    }
    // Posted after the host's install of the workers: the first poll finds them.
    std::vector<std::shared_ptr<poller>> pollers;
    for (unsigned i = 0; i < config.lambda_concurrency; ++i) {
        pollers.push_back(std::make_shared<poller>(host, drain, api, i));
    }
    asio::post(loop, [&pollers] {
        for (auto& p : pollers) p->start();
    });
    // The loop may have nothing of its own pending (a crashed worker's result is being read
    // on the pool, every poller waiting for it): it keeps running until the process is
    // stopped, as a server's loop does with its acceptor.
    const auto keep_running = asio::make_work_guard(loop);
    loop.run();
    return 0;
}

}  // namespace actionloop::lambda
