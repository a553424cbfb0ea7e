#include "host/action_host.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <future>
#include <stdexcept>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "logging.hpp"
#include "payload/extractor.hpp"

namespace actionloop {

namespace fs = std::filesystem;

action_host::action_host(settings config, char** environ_entries)
    : settings_(std::move(config)),
      base_env_(ACTIONLOOP_VERSION, settings_.execution_env, settings_.wait_for_ack,
                environ_entries),
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
    std::unique_ptr<executor> started;
    try {
        started = start_action(dir);
    } catch (const start_error& e) {
        remove_dir();
        return {init_outcome::result::start_failed, e.what(), e.stderr_tail};
    }
    install(std::move(started));
    initialized_ = true;
    return {};
}

std::unique_ptr<executor> action_host::start_action(const std::string& dir) {
    executor_options options;
    // The action runs in its own directory, so the files shipped next to exec are found by
    // a relative path; the command is absolute for the same reason.
    const fs::path bin = fs::absolute(dir + "/bin");
    options.command = (bin / "exec").string();
    options.cwd = bin.string();  // exec was made executable by the builder, inside bin
    options.env = env_.for_action();
    options.wait_for_ack = !settings_.wait_for_ack.empty();
    // The offer of pipelining (answered in the ack; our launcher accepts it).
    if (options.wait_for_ack && settings_.pipeline) options.env.push_back("ACTIONLOOP_PIPELINE=1");
    if (settings_.json_logs) {
        // Its lines become records tagged with their activation (engine/output_pipe.hpp);
        // the variable lets an action print structured lines as JSON objects.
        options.log_tags = std::make_shared<log_attribution>();
        options.max_log_line_bytes = settings_.log_line_bytes;
        options.env.push_back("OW_LOG_FORMAT=json");
    }
    options.ack_timeout_ms = settings_.ack_timeout_ms;
    options.max_answer_bytes = settings_.max_answer_bytes;
    auto started = std::make_unique<executor>(std::move(options));
    started->start();
    return started;
}

// The started action becomes the current one, on the loop (posted before the init's answer,
// so a run that follows the answer finds it). Under -debug it replaces a previous one, which
// serves what was sent to it before and is then stopped.
void action_host::install(std::unique_ptr<executor> started) {
    {
        std::unique_lock<std::mutex> guard(attach_lock_);
        attached_.wait(guard, [this] { return loop_ != nullptr; });
    }
    activation_engine::hooks hooks;
    hooks.ended = [this](const activation_engine& engine, executor::outcome outcome) {
        end_activation(engine, outcome);
    };
    hooks.restarted = [this] { restarts_.fetch_add(1, std::memory_order_relaxed); };
    auto engine = std::make_shared<activation_engine>(
        *loop_, *blocking_, std::move(started), std::move(hooks),
        settings_.sched_batch == settings::batch_policy::automatic);
    boost::asio::post(*loop_, [this, engine = std::move(engine)]() mutable {
        if (engine_) engine_->retire();
        engine_ = std::move(engine);
        engine_->start();
    });
}

void action_host::run(std::string body, activation_engine::clock::time_point deadline,
                      activation_engine::completion done, long long proxy_deadline_ms) {
    ++in_flight_;
    done = [this, done = std::move(done)](activation_result result) {
        --in_flight_;
        done(std::move(result));
    };
    dispatch(std::move(body), deadline, std::move(done), proxy_deadline_ms);
}

void action_host::dispatch(std::string body, activation_engine::clock::time_point deadline,
                           activation_engine::completion done, long long proxy_deadline_ms) {
    if (inits_running_ > 0) {  // it runs on the action that the init is starting
        parked_.push_back({std::move(body), deadline, std::move(done), proxy_deadline_ms});
        return;
    }
    if (!engine_) {
        activation_result none;
        none.no_action = true;
        done(std::move(none));
        return;
    }
    engine_->submit(std::move(body), deadline, std::move(done), proxy_deadline_ms);
}

// Once the last running init is done (its action installed, or not), the runs that waited
// for it go to the action.
void action_host::init_finished() {
    if (--inits_running_ > 0) return;
    std::deque<parked_run> waited;
    waited.swap(parked_);
    for (parked_run& r : waited) {
        dispatch(std::move(r.body), r.deadline, std::move(r.done), r.proxy_deadline_ms);
    }
}

void action_host::shutdown_action(std::chrono::milliseconds time_left) {
    const auto until = std::chrono::steady_clock::now() + time_left;
    {
        std::lock_guard<std::mutex> guard(attach_lock_);
        if (loop_ == nullptr) return;
    }
    struct sent {
        int pidfd = -1;
        std::shared_ptr<activation_engine> engine;
    };
    auto promise = std::make_shared<std::promise<sent>>();
    std::future<sent> result = promise->get_future();
    boost::asio::post(*loop_, [this, promise, time_left] {
        sent s;
        if (engine_) s.pidfd = engine_->request_shutdown(time_left);
        if (s.pidfd >= 0) s.engine = engine_;
        promise->set_value(std::move(s));
    });
    if (result.wait_until(until) != std::future_status::ready) return;
    sent s = result.get();
    if (s.pidfd < 0) return;
    spdlog::info("SIGTERM: the action runs its on_shutdown ({} ms left)", time_left.count());
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        pollfd exit{s.pidfd, POLLIN, 0};
        const int ready = ::poll(&exit, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) spdlog::warn("SIGTERM: the action's on_shutdown did not end in time");
        break;
    }
    ::close(s.pidfd);
    s.engine->end_output_lines();  // what on_shutdown printed, before the proxy exits
}

std::vector<worker_state> action_host::worker_states() const {
    std::vector<worker_state> states;
    if (!engine_) return states;
    worker_state one;
    one.pid = engine_->pid();
    one.busy = engine_->in_flight() > 0;
    one.queued = engine_->waiting();
    one.restarts = restarts_.load(std::memory_order_relaxed);
    states.push_back(one);
    return states;
}

activation_engine::clock::time_point action_host::oldest_submitted() const {
    return engine_ ? engine_->oldest_submitted() : activation_engine::clock::time_point::max();
}

// The one owner of the sentinels, called by the engine as each activation ends (before the
// next request of a window of one is written): a pipelining action (our launcher) writes them
// itself after each answer, so the proxy writes them only for an activation the action could
// not finish; for any other action, after every activation. A crash is said before them, so
// it lands in the log of the activation that saw it.
void action_host::end_activation(const activation_engine& engine, executor::outcome outcome) {
    const bool sentinels = !engine.pipelined() || outcome != executor::outcome::answered;
    // The activation's lines first, its last line ended (the action's fd 2, and fd 1 in JSON
    // log mode, are pipes the proxy forwards: engine/output_pipe.hpp).
    if (sentinels) engine.end_activation_logs();
    if (outcome == executor::outcome::exited) {
        spdlog::warn("the action exited during the activation ({})", engine.describe_exit());
    }
    if (sentinels) write_sentinels();
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
