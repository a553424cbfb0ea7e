// proxy: the ActionLoop HTTP server (or, with -compile, the offline compiler).
#include <signal.h>
#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "engine/batch_scheduling.hpp"
#include "engine/cgroup_memory.hpp"
#include "engine/process.hpp"
#include "engine/reaper.hpp"
#include "host/action_host.hpp"
#include "http/server.hpp"
#include "lambda/lambda_mode.hpp"
#include "logging.hpp"
#include "metrics/metrics_server.hpp"
#include "ops/metrics.hpp"
#include "ops/shutdown.hpp"
#include "payload/extractor.hpp"
#include "protocol/knative/handler.hpp"
#include "protocol/router.hpp"

extern char** environ;

namespace {

using namespace actionloop;

// -env JSON for -compile, with ACTIONLOOP_CXXFLAGS from the shell unless -env sets it.
// Throws std::invalid_argument on JSON that is not an object.
std::string compile_env(const settings& config) {
    nlohmann::json env = nlohmann::json::object();
    if (!config.env_json.empty()) {
        env = nlohmann::json::parse(config.env_json, nullptr, false);
        if (!env.is_object()) {
            throw std::invalid_argument("-env must be a JSON object, e.g. "
                                        "'{\"ACTIONLOOP_CXXFLAGS\":\"-O2\"}'; got: " +
                                        config.env_json);
        }
    }
    if (!config.cxxflags.empty() && !env.contains("ACTIONLOOP_CXXFLAGS")) {
        env["ACTIONLOOP_CXXFLAGS"] = config.cxxflags;
    }
    return env.dump();
}

// Without a compiler, only what runs as is can be packed (upstream would zip a C++ source
// as `exec`, which then fails at /init).
void check_compilable(const settings& config, const std::string& payload) {
    if (!config.compiler.empty() || payload.empty()) return;
    const payload_kind kind = detect_kind(payload);
    if (kind == payload_kind::zip || kind == payload_kind::gzip || is_runnable(payload)) return;
    throw std::runtime_error(
        "proxy -compile: stdin is not an executable or a #! script, and OW_COMPILER is not "
        "set; set it to the compile script, e.g. OW_COMPILER=/bin/compile (in the image) or "
        "OW_COMPILER=PREFIX/bin/compile");
}

// The folder -compile builds in (action/N/src and bin): its own under TMPDIR, removed however
// the compile ends, so the current directory gets nothing but the zip the shell redirects.
class scratch_dir {
public:
    scratch_dir() {
        std::string name = (std::filesystem::temp_directory_path() / "proxy-compile-XXXXXX");
        if (::mkdtemp(name.data()) == nullptr) {
            throw std::system_error(errno, std::generic_category(),
                                    "proxy -compile: cannot make a folder to build in: " + name);
        }
        path_ = name;
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    ~scratch_dir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

int offline_compile(action_host& host, const settings& config) {
    std::string payload((std::istreambuf_iterator<char>(std::cin)),
                        std::istreambuf_iterator<char>());
    std::string env;
    try {
        env = compile_env(config);
    } catch (const std::invalid_argument& e) {
        go_log(e.what());
        return 2;  // a usage error, like a bad flag
    }
    try {
        check_compilable(config, payload);
        std::string zip = host.compile_to_zip(payload, *config.compile_main, env);
        write_stdout(zip);
        return 0;
    } catch (const std::exception& e) {
        go_log(e.what());
        return 1;
    }
}

// A scrape: the counters plus what is read at scrape time (on the loop).
std::string scrape(const action_host& host, const activation_metrics& metrics,
                   const drain_state& drain, const admission_limit& connections) {
    metrics_gauges gauges;
    gauges.open_connections = connections.count();
    const log_backlog_stats logs = log_backlog();
    gauges.log_dropped_lines = logs.dropped_lines;
    gauges.log_dropped_bytes = logs.dropped_bytes;
    gauges.log_backlog_bytes = logs.backlog_bytes;
    gauges.restarts = host.action_restarts();
    gauges.queue_depth = host.queued();
    gauges.in_flight = drain.in_flight();
    gauges.resident_bytes = resident_bytes();
    for (const worker_state& w : host.worker_states()) {
        gauges.workers.push_back({w.index, w.busy, resident_bytes_of(w.pid), w.restarts});
    }
    return render_metrics(metrics, gauges);
}

// The layers wired together: the host of the action on the event loop and its workers, the
// protocol's handler (classic, or single-entrypoint), the HTTP server in front. SIGTERM
// drains, SIGINT (or a second SIGTERM) stops at once: ops/shutdown.hpp.
int serve(action_host& host, const settings& config) {
    namespace asio = boost::asio;
    const knative::platform platform =
        knative::platform_of(config.runtime_platform ? config.runtime_platform->c_str() : nullptr);
    if (platform == knative::platform::unsupported) {
        std::cerr << knative::unsupported_platform_message(*config.runtime_platform) << std::endl;
        return knative::UNSUPPORTED_PLATFORM_EXIT;
    }
    // From here on no log write blocks its caller (logging.hpp): a stalled log reader does not
    // stop the event loop.
    start_log_writers(config.log_buffer_bytes);
    static drain_state drain;  // static: the signal thread may outlive this frame
    static activation_metrics metrics;
    static admission_limit connections(config.max_connections);  // on the loop
    static admission_limit inflight(config.max_inflight);        // on the loop
    static activation_gate gate{drain, metrics, inflight};
    handle_stop_signals(drain, std::chrono::milliseconds(config.shutdown_timeout_ms),
                        [&host](std::chrono::milliseconds left) { host.shutdown_action(left); });
    start_reaper();
    watch_memory_cgroup(memory_cgroup::of_this_process(config.cgroup_dir));
    asio::io_context loop(1);
    // The metrics port first: once the action port accepts, both do.
    if (config.metrics_port != 0) {
        start_metrics_server(
            loop, config.host, config.metrics_port,
            [&host] { return scrape(host, metrics, drain, connections); },
            [](const std::string& line) { spdlog::warn("{}", line); });
    }
    asio::thread_pool workers(std::max<size_t>(config.threads, 1));  // /init, single entrypoint
    host.attach(loop, workers);
    std::optional<knative::handler> single_entrypoint;
    std::optional<router> classic;
    handler& requests = platform == knative::platform::knative
                            ? static_cast<handler&>(single_entrypoint.emplace(
                                  host, knative::load_platform_config(), gate))
                            : classic.emplace(host, gate);
    spdlog::debug("listening on {}:{}", config.host, config.port);
    const listen_options options{config.host,           config.port,
                                 config.max_body_bytes, std::chrono::microseconds(config.spin_us),
                                 &connections,          &metrics};
    // Throws when it cannot listen.
    serve_http(loop, requests, options, [] { return drain.in_flight() > 0; });
    return 0;
}

// OW_SCHED_BATCH=1: this thread, every thread started after it and every process the proxy
// starts (the action, the compiler) run under SCHED_BATCH for good (why:
// engine/batch_scheduling.hpp).
void use_batch_scheduling() {
    if (!set_batch_policy(0, true)) {
        spdlog::warn("OW_SCHED_BATCH: cannot switch to SCHED_BATCH: {}", std::strerror(errno));
    }
}

// Lambda mode (lambda/): AWS_LAMBDA_MAX_CONCURRENCY workers; the action acks (its on_init's
// failure is the init error); a dedicated image's code is built under TMPDIR, the only
// writable folder on Lambda; no deadline grace unless OW_DEADLINE_GRACE_MS is set.
void use_lambda_defaults(settings& config) {
    config.workers = std::to_string(config.lambda_concurrency);
    if (config.wait_for_ack.empty()) config.wait_for_ack = "1";
    // Only a dedicated image's baked code is built there; a zip's exec runs where it is, so a
    // root without a temporary folder (TMPDIR unset and no /tmp) still serves.
    std::error_code no_tmp;
    const std::filesystem::path tmp = std::filesystem::temp_directory_path(no_tmp);
    config.action_dir =
        ((no_tmp ? std::filesystem::path("/tmp") : tmp) / "actionloop-action").string();
    // The deadline is Lambda's own: the timeout is reported at it, not 100 ms later.
    if (std::getenv("OW_DEADLINE_GRACE_MS") == nullptr) config.deadline_grace_ms = 0;
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
    if (config.help) {
        std::cout << help_text();
        return 0;
    }
    if (config.version) {
        std::cout << "OpenWhisk ActionLoop Proxy v" << ACTIONLOOP_VERSION
                  << " (actionloop-cpp), built with g++ " << __VERSION__ << std::endl;
        return 0;
    }
    setup_logging(config.debug, config.json_logs, config.log_line_bytes);
    if (config.debug) ::setenv("OW_DEBUG", "1", 1);
    // Before any thread is started (auto: the engine switches, engine/batch_scheduling.hpp).
    if (config.sched_batch == settings::batch_policy::always) use_batch_scheduling();
    int status = 1;
    try {
        std::optional<scratch_dir> scratch;  // declared first: removed after the host is gone
        if (config.compile_main) config.action_dir = scratch.emplace().path() + "/action";
        const bool lambda = !config.lambda_runtime_api.empty() && !config.compile_main;
        if (lambda) use_lambda_defaults(config);
        action_host host(config, environ);
        if (config.compile_main) {
            status = offline_compile(host, config);
        } else {
            status = lambda ? lambda::run(host) : serve(host, config);
        }
    } catch (const std::exception& e) {
        spdlog::critical("{}", e.what());
    }
    flush_logs(std::chrono::seconds(2));  // what the writers hold (logging.hpp), within a bound
    return status;
}
