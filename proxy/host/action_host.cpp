#include "host/action_host.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <future>
#include <stdexcept>
#include <thread>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "engine/cgroup_cpu.hpp"
#include "logging.hpp"
#include "payload/extractor.hpp"

namespace actionloop {

namespace fs = std::filesystem;

namespace {

// Where a container's own cgroup is mounted (OW_WORKERS=auto reads its CPU quota there).
constexpr const char* CGROUP_ROOT = "/sys/fs/cgroup";

// A worker's start failure, named: "worker 3 of 4: …" (start_error keeps its stderr tail;
// anything else, no pipes or processes left, goes as it is).
[[noreturn]] void rethrow_naming_worker(const std::exception_ptr& failure, unsigned index,
                                        unsigned count) {
    try {
        std::rethrow_exception(failure);
    } catch (const start_error& e) {
        throw start_error(
            "worker " + std::to_string(index) + " of " + std::to_string(count) + ": " + e.what(),
            e.stderr_tail);
    }
}

// Waits until each pidfd is readable (its process has exited), at most until `until`;
// returns how many have not exited by then.
std::size_t wait_for_exits(const std::vector<int>& pidfds,
                           std::chrono::steady_clock::time_point until) {
    std::vector<pollfd> running;
    running.reserve(pidfds.size());
    for (const int pidfd : pidfds) running.push_back({pidfd, POLLIN, 0});
    while (!running.empty()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        const int ready = ::poll(running.data(), running.size(),
                                 static_cast<int>(std::max<long long>(left.count(), 0)));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) break;
        running.erase(std::remove_if(running.begin(), running.end(),
                                     [](const pollfd& p) { return p.revents != 0; }),
                      running.end());
    }
    return running.size();
}

}  // namespace

/// What shutdown_action() sent the shutdown line to: each worker's pidfd, and its engine.
struct action_host::shutting_down {
    std::vector<int> pidfds;
    std::vector<std::shared_ptr<activation_engine>> engines;
};

action_host::action_host(settings config, char** environ_entries)
    : settings_(std::move(config)),
      // Lambda mode: the action gets the whole environment (AWS_REGION, the credentials, the
      // Runtime API: what Lambda's runtimes give a function), OpenWhisk's rules otherwise.
      base_env_(ACTIONLOOP_VERSION, settings_.execution_env, settings_.wait_for_ack,
                environ_entries, !settings_.lambda_runtime_api.empty()),
      env_(base_env_),
      builder_(settings_, env_) {
    if (settings_.debug) base_env_.apply({{"OW_DEBUG", "/tmp/action.log"}});  // as upstream
    env_ = base_env_;
}

void action_host::attach(boost::asio::io_context& loop, boost::asio::thread_pool& blocking) {
    std::lock_guard<std::mutex> guard(attach_lock_);
    loop_ = &loop;
    blocking_ = &blocking;
    attached_.notify_all();
}

// build → check exec.env → start → install. A failed build's directory is removed (upstream
// keeps it; a full disk would stay full), as is a failed start's; an exec.env mismatch keeps
// it for inspection. Under -debug nothing is removed.
init_outcome action_host::init(const std::string& payload, const std::string& main,
                               const nlohmann::json& env) {
    // Each /init's env replaces the one before (a failed init's included): the action gets
    // the proxy's part and this init's env only.
    env_ = base_env_;
    env_.apply(env);
    const worker_count workers = resolve_workers();
    if (!workers.error.empty()) return {init_outcome::result::start_failed, workers.error, {}};
    spdlog::debug("init: {} bytes of code, main '{}'", payload.size(), main);
    const std::string dir = builder_.next_dir();
    const auto remove_dir = [&] {
        std::error_code ec;
        if (!settings_.debug) fs::remove_all(dir, ec);
    };
    std::string error = builder_.build(dir, payload, main);
    if (!error.empty()) {
        remove_dir();
        return {init_outcome::result::build_failed, std::move(error), {}};
    }
    if (auto mismatch = builder_.check_execution_env(dir)) {
        return {init_outcome::result::start_failed, std::move(*mismatch), {}};
    }
    started_workers started;
    try {
        started = start_workers(dir + "/bin", workers.count);
    } catch (const start_error& e) {
        remove_dir();
        return {init_outcome::result::start_failed, e.what(), e.stderr_tail};
    }
    install(std::move(started));
    initialized_ = true;
    return {};
}

// Lambda mode: the action is `exec` in a folder that stays as it is (read-only on Lambda):
// no build, no copy; the workers start there.
init_outcome action_host::init_prebuilt(const std::string& bin_dir) {
    const worker_count workers = resolve_workers();
    if (!workers.error.empty()) return {init_outcome::result::start_failed, workers.error, {}};
    std::error_code ec;
    if (!fs::is_regular_file(bin_dir + "/exec", ec)) {
        return {init_outcome::result::start_failed,
                "no action: " + bin_dir + "/exec is not a file",
                {}};
    }
    started_workers started;
    try {
        started = start_workers(bin_dir, workers.count);
    } catch (const start_error& e) {
        return {init_outcome::result::start_failed, e.what(), e.stderr_tail};
    }
    install(std::move(started));
    initialized_ = true;
    return {};
}

// OW_WORKERS for this init: /init's env (in env_ now) over the proxy's; `auto` reads the CPU
// quota of OW_CGROUP_DIR, else of /sys/fs/cgroup (a container's own cgroup).
worker_count action_host::resolve_workers() const {
    std::optional<std::string> from_init;
    const auto& values = env_.values();
    if (const auto given = values.find("OW_WORKERS"); given != values.end()) {
        from_init = given->second;
    }
    const std::string cgroup = settings_.cgroup_dir.empty() ? CGROUP_ROOT : settings_.cgroup_dir;
    worker_count resolved =
        resolve_worker_count(settings_.workers, from_init, settings_.max_workers,
                             [&cgroup] { return container_cpus(cgroup); });
    if (resolved.capped) {
        spdlog::info("OW_WORKERS: {} workers, as OW_MAX_WORKERS caps it", resolved.count);
    }
    return resolved;
}

// All `count` workers start at once (spawn and ack, on_init included: a slow one costs its own
// time, not N times it); each must ack. A failure stops the others (every started one is
// destroyed, which kills it) and names the worker: "worker 3 of 4: …" (one worker: the error as
// it is, upstream's text).
action_host::started_workers action_host::start_workers(const std::string& bin_dir,
                                                        unsigned count) {
    started_workers started(count);
    std::vector<std::exception_ptr> failures(count);
    const auto start_one = [&](unsigned index) {
        try {
            started[index] = start_action(bin_dir, index, count);
        } catch (...) {
            failures[index] = std::current_exception();
        }
    };
    if (count == 1) {
        start_one(0);
    } else {
        std::vector<std::thread> starting;
        starting.reserve(count);
        for (unsigned index = 0; index < count; ++index) {
            try {
                starting.emplace_back(start_one, index);
            } catch (...) {  // no thread left: this one fails, the started ones are joined
                failures[index] = std::current_exception();
            }
        }
        for (std::thread& one : starting) one.join();
    }
    for (unsigned index = 0; index < count; ++index) {
        if (!failures[index]) continue;
        started.clear();
        if (count == 1) std::rethrow_exception(failures[index]);
        rethrow_naming_worker(failures[index], index, count);
    }
    return started;
}

std::unique_ptr<executor> action_host::start_action(const std::string& bin_dir, unsigned index,
                                                    unsigned count) {
    executor_options options;
    // The action runs in its own directory, so the files shipped next to exec are found by
    // a relative path; the command is absolute for the same reason.
    const fs::path bin = fs::absolute(bin_dir);
    options.command = (bin / "exec").string();
    options.cwd = bin.string();  // exec was made executable by the builder, inside bin
    env_map worker_env = env_;
    worker_env.apply(
        {{"OW_WORKERS", std::to_string(count)}, {"OW_WORKER_INDEX", std::to_string(index)}});
    options.env = worker_env.for_action();
    options.wait_for_ack = !settings_.wait_for_ack.empty();
    // The offer of pipelining (answered in the ack; our launcher accepts it).
    if (options.wait_for_ack && settings_.pipeline) options.env.push_back("ACTIONLOOP_PIPELINE=1");
    // No sentinels where none is read (single-entrypoint mode, plain lines): our launcher
    // then writes none either.
    if (!settings_.json_logs.sentinels) options.env.push_back("ACTIONLOOP_SENTINELS=0");
    if (settings_.json_logs) {
        // Its lines become records tagged with their activation (engine/output_pipe.hpp);
        // the variable lets an action print structured lines as JSON objects.
        options.log_tags = std::make_shared<log_attribution>();
        options.env.push_back("OW_LOG_FORMAT=json");
    }
    // Several workers share the proxy's stdout and stderr: plain lines go whole (output_pipe.hpp).
    options.whole_log_lines = count > 1;
    options.max_log_line_bytes = settings_.log_line_bytes;
    options.ack_timeout_ms = settings_.ack_timeout_ms;
    options.max_answer_bytes = settings_.max_answer_bytes;
    auto started = std::make_unique<executor>(std::move(options));
    started->start();
    return started;
}

// The started workers become the current action, on the loop (posted before the init's
// answer, so a run that follows the answer finds them). Under -debug they replace the previous
// ones, which serve what was sent to them before and are then stopped.
void action_host::install(started_workers started) {
    {
        std::unique_lock<std::mutex> guard(attach_lock_);
        attached_.wait(guard, [this] { return loop_ != nullptr; });
    }
    std::vector<std::shared_ptr<activation_engine>> engines;
    for (std::unique_ptr<executor>& action : started) {
        activation_engine::hooks hooks;
        hooks.ended = [this](const activation_engine& engine, executor::outcome outcome) {
            end_activation(engine, outcome);
        };
        hooks.restarted = [this] { restarts_.fetch_add(1, std::memory_order_relaxed); };
        // SCHED_BATCH switches the loop's thread with the process: one worker only (several
        // would switch that one thread back and forth).
        auto engine = std::make_shared<activation_engine>(
            *loop_, *blocking_, std::move(action), std::move(hooks),
            settings_.sched_batch == settings::batch_policy::automatic && started.size() == 1);
        if (started.size() > 1) engine->name_worker("worker " + std::to_string(engines.size()));
        // Lambda's error of a crash carries the backtrace the launcher printed.
        if (!settings_.lambda_runtime_api.empty()) engine->keep_stderr_tails();
        engines.push_back(std::move(engine));
    }
    boost::asio::post(*loop_, [this, engines = std::move(engines)]() mutable {
        for (auto& old : engines_) old->retire();
        engines_ = std::move(engines);
        loads_.assign(engines_.size(), worker_load{});
        for (auto& engine : engines_) engine->start();
    });
}

void action_host::run(std::string body, activation_engine::clock::time_point deadline,
                      activation_engine::completion done, long long proxy_deadline_ms) {
    if (inits_running_ > 0) {  // it runs on the action that the init is starting
        parked_.push_back({std::move(body), deadline, std::move(done), proxy_deadline_ms});
        return;
    }
    if (engines_.empty()) {
        activation_result none;
        none.no_action = true;
        done(std::move(none));
        return;
    }
    engines_[next_worker()]->submit(std::move(body), deadline, std::move(done), proxy_deadline_ms);
}

// engine/worker_choice.hpp's rule over the workers' loads now (one worker: no choice).
std::size_t action_host::next_worker() {
    if (engines_.size() == 1) return 0;
    for (std::size_t i = 0; i < engines_.size(); ++i) {
        loads_[i] = {engines_[i]->in_flight(), engines_[i]->waiting()};
    }
    return choose_worker(loads_);
}

// Once the last running init is done (its action installed, or not), the runs that waited
// for it go to the action.
void action_host::init_finished() {
    if (--inits_running_ > 0) return;
    std::deque<parked_run> waited;
    waited.swap(parked_);
    for (parked_run& r : waited) {
        run(std::move(r.body), r.deadline, std::move(r.done), r.proxy_deadline_ms);
    }
}

// The shutdown line goes to every worker that offered it (each runs its on_shutdown), and
// all of them get the time left together.
void action_host::shutdown_action(std::chrono::milliseconds time_left) {
    const auto until = std::chrono::steady_clock::now() + time_left;
    {
        std::lock_guard<std::mutex> guard(attach_lock_);
        if (loop_ == nullptr) return;
    }
    auto promise = std::make_shared<std::promise<shutting_down>>();
    std::future<shutting_down> result = promise->get_future();
    boost::asio::post(*loop_, [this, promise, time_left] {
        shutting_down sent;
        for (const auto& engine : engines_) {
            const int pidfd = engine->request_shutdown(time_left);
            if (pidfd < 0) continue;
            sent.pidfds.push_back(pidfd);
            sent.engines.push_back(engine);
        }
        promise->set_value(std::move(sent));
    });
    if (result.wait_until(until) != std::future_status::ready) return;
    const shutting_down sent = result.get();
    if (sent.pidfds.empty()) return;
    if (sent.pidfds.size() == 1) {
        spdlog::info("SIGTERM: the action runs its on_shutdown ({} ms left)", time_left.count());
    } else {
        spdlog::info("SIGTERM: {} workers run their on_shutdown ({} ms left)", sent.pidfds.size(),
                     time_left.count());
    }
    const std::size_t late = wait_for_exits(sent.pidfds, until);
    if (late > 0 && sent.pidfds.size() == 1) {
        spdlog::warn("SIGTERM: the action's on_shutdown did not end in time");
    } else if (late > 0) {
        spdlog::warn("SIGTERM: the on_shutdown of {} of {} workers did not end in time", late,
                     sent.pidfds.size());
    }
    for (const int pidfd : sent.pidfds) ::close(pidfd);
    // What on_shutdown printed, before the proxy exits.
    for (const auto& engine : sent.engines) engine->end_output_lines();
}

std::vector<worker_state> action_host::worker_states() const {
    std::vector<worker_state> states;
    states.reserve(engines_.size());
    for (std::size_t i = 0; i < engines_.size(); ++i) {
        const activation_engine& engine = *engines_[i];
        worker_state one;
        one.index = static_cast<unsigned>(i);
        one.pid = engine.pid();
        one.busy = engine.in_flight() > 0;
        one.queued = engine.waiting();
        one.restarts = engine.restarts();
        states.push_back(one);
    }
    return states;
}

size_t action_host::queued() const {
    size_t waiting = parked_.size();
    for (const auto& engine : engines_) waiting += engine->waiting();
    return waiting;
}

activation_engine::clock::time_point action_host::oldest_submitted() const {
    auto oldest = activation_engine::clock::time_point::max();
    for (const auto& engine : engines_) oldest = std::min(oldest, engine->oldest_submitted());
    return oldest;
}

// The one owner of the sentinels, called by the engine as each activation ends (before the
// next request of a window of one is written): a pipelining action (our launcher) writes them
// itself after each answer, so the proxy writes them only for an activation the action could
// not finish; for any other action, after every activation. A crash is said before them, so
// it lands in the log of the activation that saw it.
void action_host::end_activation(const activation_engine& engine, executor::outcome outcome) {
    // Lambda mode has no sentinels at all (its logs are read by no OpenWhisk invoker; the
    // launcher writes none there either), but each activation's lines still end with it.
    const bool lambda = !settings_.lambda_runtime_api.empty();
    const bool sentinels =
        !lambda && (!engine.pipelined() || outcome != executor::outcome::answered);
    // The activation's lines first, its last line ended (the action's fd 2, and fd 1 in JSON
    // log mode, are pipes the proxy forwards: engine/output_pipe.hpp).
    if (sentinels || lambda) engine.end_activation_logs();
    if (outcome == executor::outcome::exited) {
        spdlog::warn("{}", engine.named("the action exited during the activation (" +
                                        engine.describe_exit() + ")"));
    }
    // Lambda mode: the marks without the text (logging.cpp), which end the activation's
    // records in JSON log mode.
    if (sentinels || lambda) write_sentinels();
}

std::string action_host::compile_to_zip(const std::string& payload, const std::string& main,
                                        const std::string& env_json) {
    if (payload.empty()) {
        throw std::runtime_error(
            "proxy -compile: stdin is empty; give the action on stdin: a source file or a zip "
            "of sources (built with OW_COMPILER), or an executable, e.g. "
            "proxy -compile main < main.cpp > action.zip");
    }
    if (!env_json.empty()) {
        auto env = nlohmann::json::parse(env_json, nullptr, false);  // invalid: ignored
        if (!env.is_discarded()) env_.apply(env);
    }
    const std::string dir = builder_.next_dir();
    const std::string error = builder_.build(dir, payload, main.empty() ? "main" : main);
    if (!error.empty()) throw std::runtime_error(error);
    return zip_directory(dir + "/bin");
}

}  // namespace actionloop
