// The proxy's state: the settings, the action environment and the activation engine that
// serves /run on the current action (engine/engine.hpp). The protocol steps live in
// payload/init_handler.cpp and engine/run_handler.cpp; both throw http_error for every failure,
// and http/answers.cpp is the one place that turns those into HTTP answers.
//
// Threads: /run and everything about the engine run on the event loop (attach()); /init runs
// on a worker (it compiles and starts the action) and hands the started action to the loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "engine/engine.hpp"
#include "engine/executor.hpp"
#include "payload/env_map.hpp"
#include "settings.hpp"

namespace actionloop {

struct http_answer {
    int status = 200;
    std::string body;  // application/json
};

class action_proxy {
public:
    action_proxy(settings config, char** environ_entries);

    /// The event loop that drives /run and the pool for blocking work; once, before serving.
    void attach(boost::asio::io_context& loop, boost::asio::thread_pool& blocking);

    /// POST /init (docs/protocol.md, /init), on a worker: blocks while it builds and starts
    /// the action, which then replaces the current one on the loop. While an /init runs
    /// (between init_started() and init_finished(), both on the loop), /run requests wait for
    /// it, as upstream's lock makes them.
    http_answer init(const std::string& body);
    void init_started() { ++inits_running_; }
    void init_finished();

    using answer_callback = std::function<void(http_answer)>;
    /// POST /run (the /run table of docs/protocol.md), on the loop: `done` gets the answer,
    /// on the loop.
    void run(std::string body, answer_callback done);
    /// POST /run from a worker thread (single-entrypoint mode): blocks until answered.
    http_answer run_blocking(std::string body);

    /// `proxy -compile MAIN`: builds `payload` like /init would and returns a zip of the
    /// resulting bin directory. Throws std::runtime_error with the error text.
    std::string compile_to_zip(const std::string& payload, const std::string& main,
                               const std::string& env_json);

    const settings& config() const { return settings_; }

    /// For /metrics: action processes started again after they died.
    std::uint64_t action_restarts() const { return restarts_.load(std::memory_order_relaxed); }
    /// For /metrics, on the loop: /run activations waiting for their turn at the action.
    size_t queued() const { return parked_.size() + (engine_ ? engine_->waiting() : 0); }
    /// For /health, on the loop: why the action is not serving (an activation has run
    /// longer than OW_RUN_TIMEOUT_MS), or nullopt.
    std::optional<std::string> overrun() const;

private:
    struct parked_run {
        std::string body;
        answer_callback done;
    };

    // init_handler.cpp
    std::string next_action_dir();
    std::string build_action(const std::string& dir, const std::string& payload,
                             const std::string& main);
    void check_execution_env(const std::string& dir);
    std::unique_ptr<executor> start_action(const std::string& dir);
    [[noreturn]] void fail_init(const std::string& error, const char* generic,
                                const std::string& prefix, const std::string& stderr_tail = {});
    void install(std::unique_ptr<executor> started);

    // run_handler.cpp
    void end_activation(const activation_engine& engine, executor::outcome outcome);
    executor::clock::time_point deadline_of(const std::string& body) const;
    http_answer answer_of(activation_result result, bool bounded_by_setting) const;
    std::string run_timeout_text() const;

    settings settings_;
    env_map env_;
    std::mutex attach_lock_;  // a dedicated runtime's start-up init may come before attach()
    std::condition_variable attached_;
    boost::asio::io_context* loop_ = nullptr;
    boost::asio::thread_pool* blocking_ = nullptr;
    std::mutex init_lock_;  // one /init at a time (workers)
    bool initialized_ = false;
    long last_dir_ = 0;
    std::atomic<std::uint64_t> restarts_{0};
    // On the loop only:
    std::shared_ptr<activation_engine> engine_;  // every /run on the current action
    int inits_running_ = 0;
    std::deque<parked_run> parked_;  // /runs that came while an /init was running
};

}  // namespace actionloop
