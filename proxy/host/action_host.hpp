// host/: the host of the action, below the protocol and free of HTTP. It builds an action
// directory from what /init received (payload/), starts the action's workers (OW_WORKERS,
// worker_count.hpp: N processes, each with its own pipes and its own engine) and sends each
// activation to one of them (engine/, worker_choice.hpp); every answer is an outcome value
// (init_outcome, activation_result) that the protocol layer (protocol/) turns into statuses
// and bodies.
//
// The pool: each worker's engine answers its own activations (answers never cross), restarts
// its own process after a crash, an OOM kill or a missed deadline (the others go on), and
// pipelines within itself; a worker's environment has OW_WORKERS (the count) and
// OW_WORKER_INDEX (0-based). N = 1 (the default) is the single action process of before.
//
// Threads: run() and everything about the engines run on the event loop (attach()); init()
// runs on a thread of the blocking pool (it compiles the action and starts its workers, each
// on a thread of its own) and hands the started workers to the loop. While an init runs
// (between init_started() and init_finished(), both on the loop), runs wait for it, as
// upstream's lock makes them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "engine/engine.hpp"
#include "engine/executor.hpp"
#include "engine/worker_choice.hpp"
#include "host/worker_count.hpp"
#include "payload/action_builder.hpp"
#include "payload/env_map.hpp"
#include "settings.hpp"

namespace actionloop {

/// How an init ended.
struct init_outcome {
    enum class result {
        started,       // the action runs and serves the next activations
        build_failed,  // unpacking, the compiler, or the rename into bin/ failed
        start_failed,  // exec.env mismatch, or the process died or did not ack
    };
    result kind = result::started;
    std::string error;        // why, when not started
    std::string stderr_tail;  // start_failed: the action's last lines on stderr, if any
};

/// One worker of the pool (OW_WORKERS action processes), as /metrics and /health see it.
struct worker_state {
    unsigned index = 0;          // 0 … workers-1, as the worker's OW_WORKER_INDEX says
    pid_t pid = 0;               // its current process (0: none running)
    bool busy = false;           // an activation is in it (written, not answered)
    std::size_t queued = 0;      // activations waiting for it (not written yet)
    std::uint64_t restarts = 0;  // its process started again after dying
};

class action_host {
public:
    action_host(settings config, char** environ_entries);

    /// The event loop that drives run() and the pool for blocking work; once, before serving.
    void attach(boost::asio::io_context& loop, boost::asio::thread_pool& blocking);
    boost::asio::io_context& loop() const { return *loop_; }
    boost::asio::thread_pool& workers() const { return *blocking_; }

    /// One init at a time: hold the turn from the first check to init()'s end.
    std::unique_lock<std::mutex> init_turn() { return std::unique_lock<std::mutex>(init_lock_); }
    /// An init has succeeded (with the turn held).
    bool initialized() const { return initialized_; }

    /// Builds `payload` (the decoded code: a source, an archive or an executable) into a new
    /// action directory with `main` as the entry point, starts it and, once started, makes it
    /// the current action on the loop. `env` (null or an object) is added to the action's
    /// environment first. On a worker, with the turn held. Blocks.
    init_outcome init(const std::string& payload, const std::string& main,
                      const nlohmann::json& env);
    /// Lambda mode: starts the workers on `bin_dir`/exec as it is (no build, no copy: the task
    /// root is read-only there). Blocks; with the turn held.
    init_outcome init_prebuilt(const std::string& bin_dir);
    void init_started() { ++inits_running_; }
    void init_finished();

    /// One activation, on the loop: `done` gets its result on the loop (result.no_action when
    /// no action was ever started). Waits for an init in progress.
    /// `proxy_deadline_ms`: see activation_engine::submit.
    void run(std::string body, activation_engine::clock::time_point deadline,
             activation_engine::completion done, long long proxy_deadline_ms = -1);

    /// `proxy -compile MAIN`: builds `payload` like an init would and returns a zip of the
    /// resulting bin directory. Throws std::runtime_error with the error text.
    std::string compile_to_zip(const std::string& payload, const std::string& main,
                               const std::string& env_json);

    /// The drain on SIGTERM has finished the activations in flight (any thread but the loop):
    /// an action whose ack offered it gets the shutdown line (its on_shutdown runs), and this
    /// waits for it to exit, at most `time_left`. Returns at once for any other action.
    void shutdown_action(std::chrono::milliseconds time_left);

    const settings& config() const { return settings_; }

    /// For /metrics: action processes started again after they died (all workers).
    std::uint64_t action_restarts() const { return restarts_.load(std::memory_order_relaxed); }
    /// For /metrics, on the loop: activations waiting for their turn at a worker.
    size_t queued() const;
    /// On the loop: every worker of the current action, by index (empty before an init).
    std::vector<worker_state> worker_states() const;
    /// On the loop: when the oldest unanswered activation was submitted (time_point::max()
    /// when none), for /health's overrun check.
    activation_engine::clock::time_point oldest_submitted() const;

private:
    struct parked_run {
        std::string body;
        activation_engine::clock::time_point deadline;
        activation_engine::completion done;
        long long proxy_deadline_ms;
    };

    std::size_t next_worker();
    struct shutting_down;
    using started_workers = std::vector<std::unique_ptr<executor>>;
    worker_count resolve_workers() const;
    started_workers start_workers(const std::string& bin_dir, unsigned count);
    std::unique_ptr<executor> start_action(const std::string& bin_dir, unsigned index,
                                           unsigned count);
    void install(started_workers started);
    void end_activation(const activation_engine& engine, executor::outcome outcome);

    settings settings_;
    env_map base_env_;  // the proxy's part of the action's environment, without any /init's
    env_map env_;       // base_env_ plus the latest /init's env
    action_builder builder_;
    std::mutex attach_lock_;  // a dedicated runtime's start-up init may come before attach()
    std::condition_variable attached_;
    boost::asio::io_context* loop_ = nullptr;
    boost::asio::thread_pool* blocking_ = nullptr;
    std::mutex init_lock_;  // one init at a time (workers)
    bool initialized_ = false;
    std::atomic<std::uint64_t> restarts_{0};
    // On the loop only:
    // The workers of the current action, by index (OW_WORKER_INDEX); empty before an init.
    std::vector<std::shared_ptr<activation_engine>> engines_;
    std::vector<worker_load> loads_;  // next_worker()'s view of engines_ (reused)
    int inits_running_ = 0;
    std::deque<parked_run> parked_;  // activations that came while an init was running
};

}  // namespace actionloop
